// One question or answer in the chat: an answer's steps (folded once it is done), its text as the server's
// sanitized HTML with every [n] a link, its sources and the passage behind each, and
// the thumbs. Everything is built with the DOM: no inline script or style.
"use strict";

// Messages go to the chat's list, or to `box` (the admin page's read-only panel).
function addUserMessage(text, box = $("messages")) {
  const div = document.createElement("div");
  div.className = "message user";
  div.textContent = text;
  box.append(div);
}

function addAnswer(box = $("messages")) {
  const div = document.createElement("div");
  div.className = "message assistant running";
  div.innerHTML = '<ul class="steps"></ul><div class="answer"></div>';
  box.append(div);
  return div;
}

function addStep(div, text, stage) {
  const steps = div.querySelector(".steps");
  for (const li of steps.querySelectorAll("li")) li.classList.add("done");
  const li = document.createElement("li");
  li.textContent = text;
  li.dataset.stage = stage;
  steps.append(li);
}

// While the turn runs only the current step shows (CSS); then they fold into one line.
function foldSteps(div, ms) {
  div.classList.remove("running");
  const steps = div.querySelector(".steps");
  if (!steps || steps.parentElement.tagName === "DETAILS") return;
  const n = steps.children.length;
  if (!n) { steps.remove(); return; }
  for (const li of steps.children) li.classList.add("done");
  const fold = document.createElement("details");
  fold.className = "fold";
  const summary = document.createElement("summary");
  summary.textContent = t("steps", { n, s: ((ms || 0) / 1000).toFixed(1) });
  fold.append(summary);
  steps.replaceWith(fold);
  fold.append(steps);
}

// Each [n] of a known source in the text (not inside a link or code) becomes a link.
function linkCitations(root, sources, open) {
  const known = new Set(sources.map((s) => s.number));
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) {
    if (!walker.currentNode.parentElement.closest("a, code, pre")) nodes.push(walker.currentNode);
  }
  for (const node of nodes) {
    const parts = node.textContent.split(/(\[\d+\])/);
    if (parts.length === 1) continue;
    const pieces = document.createDocumentFragment();
    for (const part of parts) {
      const n = Number((/^\[(\d+)\]$/.exec(part) || [])[1]);
      if (!known.has(n)) { pieces.append(part); continue; }
      const a = document.createElement("a");
      a.className = "cite";
      a.href = "#";
      a.dataset.n = String(n);
      a.textContent = part;
      a.addEventListener("click", (event) => { event.preventDefault(); open(n); });
      pieces.append(a);
    }
    node.replaceWith(pieces);
  }
}

// The passage behind source n: the quote, where in the document, the title, the link.
function showPassage(div, sources, n) {
  const source = sources.find((s) => s.number === n);
  let panel = div.querySelector(".passage");
  if (!source) return;
  for (const li of div.querySelectorAll(".sources li")) {
    li.classList.toggle("highlight", li.value === n);
  }
  if (!panel) {
    panel = document.createElement("aside");
    panel.className = "passage";
    div.querySelector(".sources").after(panel);
  }
  panel.innerHTML = "";
  const head = document.createElement("div");
  head.className = "passage-head";
  const title = document.createElement("strong");
  title.textContent = `[${n}] ${sourceName(source)}`;
  head.append(title);
  if (source.location) {
    const where = document.createElement("span");
    where.className = "meta";
    where.textContent = source.location;
    head.append(where);
  }
  const close = document.createElement("button");
  close.type = "button";
  close.className = "close";
  close.textContent = "×";
  close.setAttribute("aria-label", t("close"));
  close.addEventListener("click", () => panel.remove());
  head.append(close);
  const quote = document.createElement("blockquote");
  quote.textContent = source.quote || "";
  panel.append(head, quote);
  const link = webLink(source.link);
  if (link) {
    const a = document.createElement("a");
    a.href = link;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    a.textContent = `${t("open")} ↗`;
    panel.append(a);
  }
}

// elapsedMs: what the asker waited (the page's clock); a stored answer has its timings.
function renderFinal(div, final, elapsedMs) {
  foldSteps(div, elapsedMs ?? (final.timings || {}).total);
  const sources = final.sources || [];
  const answer = div.querySelector(".answer");
  if (final.html) answer.innerHTML = final.html;  // sanitized by the server (markdown.py)
  else answer.textContent = final.response;
  answer.classList.add("rendered");
  const open = (n) => showPassage(div, sources, n);
  linkCitations(answer, sources, open);
  for (const old of div.querySelectorAll(".sources, .passage, .feedback")) old.remove();
  if (sources.length) {
    const ol = document.createElement("ol");
    ol.className = "sources";
    for (const s of sources) {
      const li = document.createElement("li");
      li.value = s.number;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "source";
      button.textContent = sourceName(s) + (s.location ? ` · ${s.location}` : "");
      button.addEventListener("click", () => open(s.number));
      li.append(button);
      ol.append(li);
    }
    div.append(ol);
  }
  if (final.message_id && !final.is_blocked) div.append(feedbackBar(final.message_id));
}

function feedbackBar(messageId) {
  const bar = document.createElement("div");
  bar.className = "feedback";
  // Words, not emoji: a server without an emoji font shows those as boxes.
  bar.innerHTML = `<button type="button" class="up">${t("helpful")}</button>`
    + `<button type="button" class="down">${t("notHelpful")}</button>`;
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
