// The web chat: sign in, list conversations, ask with a streamed answer (progress
// steps, then the text, then the cited final answer) and vote on answers.
"use strict";
let conversationId = null;

const $ = (id) => document.getElementById(id);

function showSignIn(reason) {
  $("app").classList.add("hidden");
  $("sign-out").classList.add("hidden");
  $("signin").classList.remove("hidden");
  $("signin-error").textContent = reason || "";
}

async function showApp() {
  $("signin").classList.add("hidden");
  $("app").classList.remove("hidden");
  $("sign-out").classList.remove("hidden");
  await loadConversations();
}

async function signIn(event) {
  event.preventDefault();
  const token = $("token-input").value.trim();
  if (token) {
    localStorage.setItem("teamrag.token", token);
  } else {
    const form = new URLSearchParams({
      username: $("name-input").value, password: $("password-input").value,
    });
    const response = await fetch("/api/auth/token", { method: "POST", body: form });
    const body = await response.json();
    if (!response.ok) {
      $("signin-error").textContent = `${t("signInFailed")}: ${body.detail}`;
      return;
    }
    localStorage.setItem("teamrag.token", body.access_token);
  }
  try { await showApp(); } catch (e) { /* showSignIn said why */ }
}

async function loadConversations() {
  const response = await api("/api/conversations?limit=50");
  const page = await response.json();
  const list = $("conversations");
  list.innerHTML = "";
  if (!page.items.length) {
    const empty = document.createElement("li");
    empty.textContent = t("noConversations");
    empty.className = "empty";
    list.append(empty);
  }
  for (const item of page.items) {
    const li = document.createElement("li");
    li.textContent = item.title;
    li.dataset.id = item.id;
    li.classList.toggle("active", item.id === conversationId);
    li.addEventListener("click", () => openConversation(item.id));
    list.append(li);
  }
}

async function openConversation(id) {
  conversationId = id;
  const detail = await (await api(`/api/conversations/${id}`)).json();
  $("messages").innerHTML = "";
  for (const m of detail.messages) {
    if (m.role === "user") addUserMessage(m.content);
    else renderFinal(addAnswer(), { response: m.content, sources: m.sources, message_id: m.id, ...m.meta });
  }
  await loadConversations();
}

function newChat() {
  conversationId = null;
  $("messages").innerHTML = "";
  for (const li of document.querySelectorAll("#conversations li")) li.classList.remove("active");
  $("question").focus();
}

function addUserMessage(text) {
  const div = document.createElement("div");
  div.className = "message user";
  div.textContent = text;
  $("messages").append(div);
}

function addAnswer() {
  const div = document.createElement("div");
  div.className = "message assistant";
  div.innerHTML = '<ul class="steps"></ul><div class="answer"></div>';
  $("messages").append(div);
  return div;
}

// [n] in the text becomes a link to source n (its own link when it has one).
function citedHtml(text, sources, messageId) {
  const known = new Set(sources.map((s) => s.number));
  return escapeHtml(text).replace(/\[(\d+)\]/g, (whole, n) => known.has(Number(n))
    ? `<a class="cite" data-n="${n}" href="#src-${messageId}-${n}">[${n}]</a>` : whole);
}

function renderFinal(div, final) {
  for (const li of div.querySelectorAll(".steps li")) li.classList.add("done");
  const sources = final.sources || [];
  const answer = div.querySelector(".answer");
  answer.innerHTML = citedHtml(final.response, sources, final.message_id);
  div.querySelector(".sources")?.remove();
  div.querySelector(".feedback")?.remove();
  if (sources.length) {
    const ol = document.createElement("ol");
    ol.className = "sources";
    for (const s of sources) {
      const li = document.createElement("li");
      li.id = `src-${final.message_id}-${s.number}`;
      li.value = s.number;
      li.innerHTML = sourceItemHtml(s);
      ol.append(li);
    }
    div.append(ol);
    for (const a of answer.querySelectorAll("a.cite")) {
      a.addEventListener("click", (event) => {
        const source = sources.find((s) => String(s.number) === a.dataset.n);
        const item = div.querySelector(`#src-${final.message_id}-${a.dataset.n}`);
        const link = source && webLink(source.link);
        if (link) { window.open(link, "_blank", "noopener"); event.preventDefault(); }
        if (item) {
          for (const li of div.querySelectorAll(".sources li")) li.classList.remove("highlight");
          item.classList.add("highlight");
        }
      });
    }
  }
  if (final.message_id && !final.is_blocked) div.append(feedbackBar(final.message_id));
}

function feedbackBar(messageId) {
  const bar = document.createElement("div");
  bar.className = "feedback";
  bar.innerHTML = `<button type="button" class="up" title="${t("helpful")}">👍</button>`
    + `<button type="button" class="down" title="${t("notHelpful")}">👎</button>`;
  const vote = async (rating, comment) => {
    const response = await api("/api/feedback", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ message_id: messageId, rating, comment: comment || "" }),
    });
    bar.innerHTML = response.ok ? `<span class="thanks">${t("thanks")}</span>`
      : `<span>${escapeHtml((await response.json()).detail)}</span>`;
  };
  bar.querySelector(".up").addEventListener("click", () => vote("up"));
  bar.querySelector(".down").addEventListener("click", () => {
    bar.innerHTML = `<input class="comment" placeholder="${t("comment")}">`
      + `<button type="button" class="send">${t("send")}</button>`;
    bar.querySelector(".send").addEventListener("click",
      () => vote("down", bar.querySelector(".comment").value));
  });
  return bar;
}

async function ask(event) {
  event.preventDefault();
  const query = $("question").value.trim();
  if (!query) return;
  $("question").value = "";
  $("send").disabled = true;
  addUserMessage(query);
  const div = addAnswer();
  const steps = div.querySelector(".steps");
  const answer = div.querySelector(".answer");
  answer.textContent = t("working");
  let streamed = "";
  try {
    const response = await api("/api/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ query, conversation_id: conversationId, stream: true }),
    });
    if (!response.ok) {
      const body = await response.json();
      const wait = response.headers.get("Retry-After");
      answer.textContent = response.status === 429 ? t("limited", { s: wait }) : `${t("error")}: ${body.detail}`;
      return;
    }
    await readEvents(response, (name, data) => {
      if (name === "progress") {
        for (const li of steps.querySelectorAll("li")) li.classList.add("done");
        const li = document.createElement("li");
        li.textContent = data.text;
        li.dataset.stage = data.stage;
        steps.append(li);
      } else if (name === "token") {
        streamed = data.reset ? data.text : streamed + data.text;
        answer.textContent = streamed;
      } else if (name === "final") {
        conversationId = data.conversation_id;
        renderFinal(div, data);
      }
      $("messages").scrollTop = $("messages").scrollHeight;
    });
    await loadConversations();
  } catch (e) {
    if (e.message !== "unauthorized") answer.textContent = `${t("error")}: ${e.message}`;
  } finally {
    $("send").disabled = false;
  }
}

// Server-Sent Events from a POST (EventSource only does GET): split on blank lines.
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trim());
      }
      if (data.length) onEvent(name, JSON.parse(data.join("\n")));
    }
  }
}

function signOut() {
  localStorage.removeItem("teamrag.token");
  conversationId = null;
  $("messages").innerHTML = "";
  showSignIn();
}

document.addEventListener("DOMContentLoaded", () => {
  translatePage();
  $("signin").addEventListener("submit", signIn);
  $("ask").addEventListener("submit", ask);
  $("question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) ask(event);
  });
  $("new-chat").addEventListener("click", newChat);
  $("sign-out").addEventListener("click", signOut);
  $("language").addEventListener("click", toggleLanguage);
  if (localStorage.getItem("teamrag.token")) showApp().catch(() => {});
  else showSignIn();
});
