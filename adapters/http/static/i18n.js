// Every string the pages show, in English and Korean. The language follows the
// browser until the user picks one; the choice is kept in localStorage.
"use strict";
const STRINGS = {
  en: {
    title: "teamrag", signIn: "Sign in", signOut: "Sign out", token: "Token",
    tokenHint: "Paste a token from `teamrag users token NAME`", or: "or",
    name: "Name", password: "Password", newChat: "New chat", ask: "Ask",
    placeholder: "Ask about the team's documents…", sources: "Sources",
    helpful: "Helpful", notHelpful: "Not helpful", comment: "What was wrong? (optional)",
    send: "Send", thanks: "Thanks for the feedback", noConversations: "No conversations yet",
    signInFailed: "Sign-in failed", working: "Working…", error: "Something went wrong",
    limited: "Too many questions: try again in {s} s", admin: "Admin",
    documents: "Documents", scopes: "Scopes", usage: "Usage per user", feedback: "Recent feedback",
    unanswered: "Questions without an answer", requests: "Requests", tokens: "Tokens",
    user: "User", scope: "Scope", chunks: "Chunks", source: "Source", rating: "Rating",
    question: "Question", when: "When", notAdmin: "This account is not an admin",
    back: "Back to chat", docTitle: "Title", remark: "Comment", language: "한국어",
    topic: "Topic", why: "Why", not_covered: "Not in the documents", thumbs_down: "👎",
  },
  ko: {
    title: "teamrag", signIn: "로그인", signOut: "로그아웃", token: "토큰",
    tokenHint: "`teamrag users token 이름`으로 받은 토큰을 붙여 넣으세요", or: "또는",
    name: "이름", password: "비밀번호", newChat: "새 대화", ask: "질문",
    placeholder: "팀 문서에 대해 물어보세요…", sources: "출처",
    helpful: "도움이 됨", notHelpful: "도움이 안 됨", comment: "무엇이 문제였나요? (선택)",
    send: "보내기", thanks: "의견 감사합니다", noConversations: "아직 대화가 없습니다",
    signInFailed: "로그인 실패", working: "처리 중…", error: "문제가 생겼습니다",
    limited: "질문이 너무 많습니다: {s}초 후에 다시 시도하세요", admin: "관리",
    documents: "문서", scopes: "범위", usage: "사용자별 사용량", feedback: "최근 피드백",
    unanswered: "답을 찾지 못한 질문", requests: "요청", tokens: "토큰",
    user: "사용자", scope: "범위", chunks: "청크", source: "출처", rating: "평가",
    question: "질문", when: "시각", notAdmin: "관리자 계정이 아닙니다",
    back: "대화로 돌아가기", docTitle: "제목", remark: "의견", language: "English",
    topic: "주제", why: "이유", not_covered: "문서에 없음", thumbs_down: "👎",
  },
};

let lang = localStorage.getItem("teamrag.lang") ||
  ((navigator.language || "en").toLowerCase().startsWith("ko") ? "ko" : "en");

function t(key, values) {
  let text = (STRINGS[lang] && STRINGS[lang][key]) || STRINGS.en[key] || key;
  for (const [k, v] of Object.entries(values || {})) text = text.replace(`{${k}}`, v);
  return text;
}

function translatePage() {
  document.documentElement.lang = lang;
  for (const el of document.querySelectorAll("[data-t]")) el.textContent = t(el.dataset.t);
  for (const el of document.querySelectorAll("[data-t-placeholder]")) {
    el.placeholder = t(el.dataset.tPlaceholder);
  }
}

function toggleLanguage() {
  lang = lang === "ko" ? "en" : "ko";
  localStorage.setItem("teamrag.lang", lang);
  translatePage();
}

function authHeaders() {
  const token = localStorage.getItem("teamrag.token");
  return token ? { Authorization: `Bearer ${token}` } : {};
}

async function api(path, options = {}) {
  const response = await fetch(path, {
    ...options,
    headers: { ...(options.headers || {}), ...authHeaders() },
  });
  if (response.status === 401) {
    localStorage.removeItem("teamrag.token");
    showSignIn((await response.json()).detail);
    throw new Error("unauthorized");
  }
  return response;
}
