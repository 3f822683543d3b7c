// The admin view: documents and scopes, usage per user, feedback, unanswered questions.
"use strict";
const $ = (id) => document.getElementById(id);

function showSignIn(reason) {
  $("admin").classList.add("hidden");
  $("signin").classList.remove("hidden");
  $("signin-error").textContent = reason || "";
}

function table(id, headers, rows) {
  const head = `<tr>${headers.map((h) => `<th>${escapeHtml(t(h))}</th>`).join("")}</tr>`;
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c ?? "")}</td>`).join("")}</tr>`);
  $(id).innerHTML = head + body.join("");
}

const when = (seconds) => new Date(seconds * 1000).toLocaleString(lang === "ko" ? "ko-KR" : "en-US");

async function load() {
  const probe = await api("/api/admin/documents");
  if (probe.status === 403) { showSignIn(t("notAdmin")); return; }
  $("signin").classList.add("hidden");
  $("admin").classList.remove("hidden");
  const docs = await probe.json();
  $("scopes").textContent = `${t("scopes")}: ` +
    Object.entries(docs.scopes).map(([s, n]) => `${s} (${n})`).join(", ");
  table("documents", ["docTitle", "scope", "chunks", "source"],
    docs.documents.map((d) => [d.title, d.scope, d.n_chunks, d.source]));
  const usage = await (await api("/api/admin/usage")).json();
  table("usage", ["user", "requests", "tokens"],
    usage.users.map((u) => [u.user, u.requests, u.total_tokens]));
  const feedback = await (await api("/api/admin/feedback")).json();
  table("feedback", ["when", "rating", "user", "question", "remark"],
    feedback.items.map((f) => [when(f.voted_at), f.rating === "up" ? "👍" : "👎", f.voter, f.question, f.comment]));
  const unanswered = await (await api("/api/admin/unanswered")).json();
  // Grouped by topic (a document, or a word the questions share): which documents to write.
  table("unanswered", ["topic", "when", "question", "why", "user"],
    unanswered.groups.flatMap((g) => g.items.map((q, i) => [
      i === 0 ? `${g.topic || "—"} (${g.count})` : "", when(q.asked_at), q.question,
      q.reasons.map((r) => t(r)).join(", ") + (q.comment ? `: ${q.comment}` : ""), q.user])));
}

document.addEventListener("DOMContentLoaded", () => {
  translatePage();
  $("language").addEventListener("click", () => { toggleLanguage(); load().catch(() => {}); });
  $("signin").addEventListener("submit", (event) => {
    event.preventDefault();
    localStorage.setItem("teamrag.token", $("token-input").value.trim());
    load().catch(() => {});
  });
  if (localStorage.getItem("teamrag.token")) load().catch(() => {});
  else showSignIn();
});
