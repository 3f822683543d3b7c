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

// A source as a reader names it: its title (the server's path is no name for a person).
function sourceName(s) {
  const path = String(s.source || "");
  return s.title || path.split(/[\\/]/).filter(Boolean).pop() || path;
}

// One item of an answer's source list, as HTML.
function sourceItemHtml(s) {
  const where = s.location ? ` · ${s.location}` : "";
  const name = escapeHtml(sourceName(s));
  const link = webLink(s.link);
  return link
    ? `<a href="${escapeHtml(link)}" target="_blank" rel="noopener">${name}</a>${escapeHtml(where)}`
    : `${name}${escapeHtml(where)}`;
}

// Requests per day over the last `days` days, oldest first, days without any included:
// the usage report's rows are per day, user and model.
function requestsPerDay(rows, days, today) {
  const totals = {};
  for (const r of rows) totals[r.day] = (totals[r.day] || 0) + r.requests;
  const end = today ? new Date(`${today}T00:00:00Z`) : new Date();
  const out = [];
  for (let i = days - 1; i >= 0; i -= 1) {
    const day = new Date(end.getTime() - i * 86400000).toISOString().slice(0, 10);
    out.push({ day, requests: totals[day] || 0 });
  }
  return out;
}
