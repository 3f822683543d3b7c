// The admin view a team lead uses: the knowledge gaps (questions the documents did not
// answer, by topic, each with its conversation, read in a panel), the documents (source, scope, chunks,
// last sync; searchable), questions per day as a chart, usage per user, and feedback
// with the question and the answer. Built with the DOM: no inline script or style.
"use strict";
const SVG = "http://www.w3.org/2000/svg";

function showSignIn(reason) {
  $("admin").classList.add("hidden");
  $("signin").classList.remove("hidden");
  $("signin-error").textContent = reason || "";
}

const when = (seconds) => (seconds ? new Date(seconds * 1000).toLocaleString(
  lang === "ko" ? "ko-KR" : "en-US", { dateStyle: "short", timeStyle: "short" }) : "");

// A cell is text, or a DOM node (a link, a folded answer).
function table(id, headers, rows) {
  const el = $(id);
  el.innerHTML = "";
  const head = el.createTHead().insertRow();
  for (const h of headers) {
    const th = document.createElement("th");
    th.textContent = t(h);
    head.append(th);
  }
  const body = el.createTBody();
  for (const r of rows) {
    const tr = body.insertRow();
    r.forEach((c, i) => {
      const td = tr.insertCell();
      td.dataset.label = t(headers[i]);  // a phone shows each row as a card of "label: value"
      const value = c instanceof Node ? c : String(c ?? "");
      if (value !== "") td.append(value);  // an empty cell stays :empty, and its line hidden
    });
  }
  if (!rows.length) body.insertRow().insertCell().textContent = t("noData");
  filterRows(id);
}

function filterRows(id) {
  const box = document.querySelector(`[data-filter="${id}"]`);
  const words = (box ? box.value : "").toLowerCase().split(/\s+/).filter(Boolean);
  for (const tr of $(id).querySelectorAll("tbody tr")) {
    const text = tr.textContent.toLowerCase();
    tr.classList.toggle("hidden", !words.every((w) => text.includes(w)));
  }
}

// An answer's Markdown read as plain lines: quote marks and emphasis are the chat's to
// render; in a table cell they are noise ("> > Postgres ...").
function plain(text) {
  return String(text || "")
    .split("\n")
    .map((line) => line.replace(/^>\s?/, "").replace(/\*\*/g, ""))
    .filter((line) => line.trim())
    .join("\n");
}

function folded(text) {
  const details = document.createElement("details");
  const summary = document.createElement("summary");
  const body = plain(text);
  const line = body.replace(/\n/g, " ");
  summary.textContent = line.length > 80 ? `${line.slice(0, 80)}…` : line;
  const full = document.createElement("div");
  full.textContent = body;
  details.append(summary, full);
  return details;
}

function svg(name, attributes, text) {
  const el = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attributes)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

// Bars of requests per day, drawn as SVG elements (no inline script or style needed).
function drawPerDay(rows, days) {
  const chart = $("per-day");
  chart.innerHTML = "";
  const series = requestsPerDay(rows, days);
  const width = Math.max(300, chart.clientWidth || 600), height = 140, bottom = 18;
  const top = Math.max(1, ...series.map((d) => d.requests));
  const step = width / series.length;
  chart.setAttribute("viewBox", `0 0 ${width} ${height}`);
  series.forEach((d, i) => {
    const h = d.requests ? Math.max(2, (height - bottom - 12) * d.requests / top) : 2;
    const bar = svg("rect", { x: i * step + 1, y: height - bottom - h, width: Math.max(1, step - 2), height: h });
    if (!d.requests) bar.classList.add("zero");
    bar.append(svg("title", {}, `${d.day}: ${d.requests}`));
    chart.append(bar);
    if ((series.length - 1 - i) % 7 === 0) {  // a label a week, the last day's included
      const last = i === series.length - 1;
      const label = svg("text", { x: last ? width : i * step, y: height - 4 }, d.day.slice(5));
      if (last) label.classList.add("end");
      chart.append(label);
    }
  });
  chart.append(svg("text", { x: 2, y: 10 }, String(top)));
  chart.setAttribute("aria-label", series.map((d) => `${d.day} ${d.requests}`).join(", "));
}

// A gap's web conversation opens read-only in a panel here: the chat would not open
// another account's conversation (GET /api/admin/conversations/{id} reads it for admins).
function conversationLink(item) {
  if (!item.conversation_id) return document.createTextNode(item.platform || "");
  const button = document.createElement("button");
  button.type = "button";
  button.className = "link";
  button.dataset.conversation = item.conversation_id;
  button.textContent = t("conversation");
  button.addEventListener("click", () => showConversation(item.conversation_id).catch(() => {}));
  return button;
}

async function showConversation(id) {
  const panel = $("gap-conversation");
  const box = $("gap-conversation-messages");
  const response = await api(`/api/admin/conversations/${encodeURIComponent(id)}`);
  const detail = await response.json();
  box.innerHTML = "";
  if (!response.ok) {
    $("gap-conversation-meta").textContent = detail.detail || t("error");
  } else {
    $("gap-conversation-meta").textContent = `${detail.owner} · ${when(detail.created_at)}`;
    for (const m of detail.messages) {
      if (m.role === "user") addUserMessage(m.content, box);
      else renderFinal(addAnswer(box), { ...m.meta, response: m.content, html: m.html, sources: m.sources, message_id: null });  // read only: no thumbs
    }
  }
  if (!panel.open) panel.showModal();
}

function drawGaps(groups) {
  const box = $("gaps");
  box.innerHTML = "";
  if (!groups.length) box.textContent = t("noData");
  for (const g of groups) {
    const div = document.createElement("div");
    div.className = "gap-group";
    const h = document.createElement("h3");
    h.textContent = `${g.topic || "—"} (${g.count})`;
    const ul = document.createElement("ul");
    for (const q of g.items) {
      const li = document.createElement("li");
      const why = q.reasons.map((r) => t(r)).join(", ") + (q.comment ? `: ${q.comment}` : "");
      li.append(`${q.question} — ${why} · ${q.user} · ${when(q.asked_at)} · `, conversationLink(q));
      ul.append(li);
    }
    div.append(h, ul);
    box.append(div);
  }
}

async function load() {
  const probe = await api("/api/admin/documents");
  if (probe.status === 403) { showSignIn(t("notAdmin")); return; }
  $("signin").classList.add("hidden");
  $("admin").classList.remove("hidden");
  const [docs, usage, feedback, unanswered] = await Promise.all([
    probe.json(),
    ...["/api/admin/usage?days=30", "/api/admin/feedback", "/api/admin/unanswered"]
      .map(async (path) => (await api(path)).json()),
  ]);
  drawGaps(unanswered.groups);
  $("scopes").textContent = `${t("scopes")}: ` +
    Object.entries(docs.scopes).map(([s, n]) => `${s} (${n})`).join(", ");
  table("documents", ["docTitle", "source", "scope", "chunks", "lastSync"],
    docs.documents.map((d) => [d.title, d.source, d.scope, d.n_chunks, when(d.ingested_at)]));
  drawPerDay(usage.rows, usage.days);
  table("usage", ["user", "requests", "tokens"],
    usage.users.map((u) => [u.user, u.requests, u.total_tokens]));
  table("feedback", ["when", "rating", "user", "question", "answer", "remark"],
    feedback.items.map((f) => [when(f.voted_at), t(f.rating === "up" ? "helpful" : "notHelpful"), f.voter,
      f.question, folded(f.answer), f.comment]));
}

document.addEventListener("DOMContentLoaded", () => {
  translatePage();
  $("language").addEventListener("click", () => { toggleLanguage(); load().catch(() => {}); });
  $("gap-conversation-close").addEventListener("click", () => $("gap-conversation").close());
  $("signin").addEventListener("submit", (event) => signInWithForm(event, () => load().catch(() => {})));
  for (const box of document.querySelectorAll("[data-filter]")) {
    box.addEventListener("input", () => filterRows(box.dataset.filter));
  }
  if (localStorage.getItem("teamrag.token")) load().catch(() => {});
  else showSignIn();
});
