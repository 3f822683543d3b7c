// Pure rendering rules shared by the pages (no DOM, no storage: tests run them in node).
"use strict";

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ({
    "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;",
  }[c]));
}

// Only http(s) addresses become links: a source's link comes from the documents (an
// ingested page's canonical link), and a javascript: one would run when clicked.
function webLink(link) {
  const text = String(link || "").trim();
  return /^https?:\/\/\S+$/i.test(text) ? text : null;
}

// One item of an answer's source list, as HTML.
function sourceItemHtml(s) {
  const where = s.location ? ` · ${s.location}` : "";
  const name = escapeHtml(s.title || s.source);
  const link = webLink(s.link);
  return link
    ? `<a href="${escapeHtml(link)}" target="_blank" rel="noopener">${name}</a>${escapeHtml(where)}`
    : `${name}${escapeHtml(where)} <span class="meta">${escapeHtml(s.source)}</span>`;
}
