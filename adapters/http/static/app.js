// The web chat: sign in, list conversations, greet an empty one with questions from the
// documents, ask with a streamed answer (progress steps, then the text, then the cited
// final answer) and vote on answers. On a phone the list sits behind the menu button.
"use strict";
let conversationId = null;

function showSignIn(reason) {
  $("app").classList.add("hidden");
  $("sign-out").classList.add("hidden");
  $("menu").classList.add("hidden");
  $("signin").classList.remove("hidden");
  $("signin-error").textContent = reason || "";
  $("name-input").focus();
}

async function showApp() {
  $("signin").classList.add("hidden");
  $("app").classList.remove("hidden");
  $("sign-out").classList.remove("hidden");
  $("menu").classList.remove("hidden");
  const wanted = new URLSearchParams(location.search).get("c");
  if (wanted) await openConversation(wanted);
  else { await loadConversations(); await showWelcome(); }
}

function toggleMenu(open) {
  const isOpen = open ?? !document.body.classList.contains("nav-open");
  document.body.classList.toggle("nav-open", isOpen);
  $("menu").setAttribute("aria-expanded", String(isOpen));
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
    li.addEventListener("click", () => { toggleMenu(false); openConversation(item.id); });
    list.append(li);
  }
}

// An empty conversation: a greeting and questions about the newest documents this
// account may search (GET /api/welcome, the rule the Slack pane's prompts follow).
async function showWelcome() {
  const welcome = $("welcome");
  clearMessages();
  welcome.classList.remove("hidden");
  const body = await (await api(`/api/welcome?language=${lang}`)).json();
  $("welcome-count").textContent = t("welcomeCount", { n: body.documents });
  const box = $("suggestions");
  box.innerHTML = "";
  for (const question of body.questions) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "suggestion";
    button.textContent = question;
    button.addEventListener("click", () => { $("question").value = question; ask(); });
    box.append(button);
  }
}

function clearMessages() {
  for (const m of document.querySelectorAll("#messages .message")) m.remove();
  $("welcome").classList.add("hidden");
}

async function openConversation(id) {
  const response = await api(`/api/conversations/${encodeURIComponent(id)}`);
  if (!response.ok) { await loadConversations(); await showWelcome(); return; }
  conversationId = id;
  const detail = await response.json();
  clearMessages();
  for (const m of detail.messages) {
    if (m.role === "user") addUserMessage(m.content);
    else renderFinal(addAnswer(), { response: m.content, html: m.html, sources: m.sources, message_id: m.id, ...m.meta });
  }
  await loadConversations();
}

function newChat() {
  conversationId = null;
  history.replaceState(null, "", "/");
  toggleMenu(false);
  for (const li of document.querySelectorAll("#conversations li")) li.classList.remove("active");
  showWelcome().catch(() => {});
  $("question").focus();
}

async function ask(event) {
  if (event) event.preventDefault();
  const query = $("question").value.trim();
  if (!query || $("send").disabled) return;
  $("question").value = "";
  $("send").disabled = true;
  $("welcome").classList.add("hidden");
  addUserMessage(query);
  const div = addAnswer();
  const answer = div.querySelector(".answer");
  let streamed = "";
  const started = performance.now();
  try {
    const response = await api("/api/chat", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
      body: JSON.stringify({ query, conversation_id: conversationId, stream: true }),
    });
    if (!response.ok) {
      const body = await response.json();
      const wait = response.headers.get("Retry-After");
      foldSteps(div, 0);
      answer.textContent = response.status === 429 ? t("limited", { s: wait }) : `${t("error")}: ${body.detail}`;
      return;
    }
    await readEvents(response, (name, data) => {
      if (name === "progress") {
        addStep(div, data.text, data.stage);
      } else if (name === "token") {
        streamed = data.reset ? data.text : streamed + data.text;
        answer.textContent = streamed;
      } else if (name === "final") {
        conversationId = data.conversation_id;
        renderFinal(div, data, performance.now() - started);
      }
      $("messages").scrollTop = $("messages").scrollHeight;
    });
    await loadConversations();
  } catch (e) {
    foldSteps(div, 0);
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
  clearMessages();
  showSignIn();
}

document.addEventListener("DOMContentLoaded", () => {
  translatePage();
  $("signin").addEventListener("submit", (event) => signInWithForm(event, () => showApp().catch(() => {})));
  $("ask").addEventListener("submit", ask);
  $("question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) ask(event);
  });
  $("new-chat").addEventListener("click", newChat);
  $("sign-out").addEventListener("click", signOut);
  $("menu").addEventListener("click", () => toggleMenu());
  $("scrim").addEventListener("click", () => toggleMenu(false));
  $("language").addEventListener("click", () => {
    toggleLanguage();
    if (!conversationId && !$("app").classList.contains("hidden")) showWelcome().catch(() => {});
  });
  if (localStorage.getItem("teamrag.token")) showApp().catch(() => {});
  else showSignIn();
});
