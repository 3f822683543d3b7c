// Every string the pages show, in English and Korean. The language follows the
// browser until the user picks one; the choice is kept in localStorage.
"use strict";
const STRINGS = {
  en: {
    title: "teamrag", signIn: "Sign in", signOut: "Sign out", token: "API token",
    tokenHint: "A token your administrator gave you", signInTitle: "Sign in to ask the team's documents",
    wrongPassword: "The name or password is not right. Check them, or ask your administrator to reset the password.",
    slowDown: "Too many tries. Wait {s} seconds, then sign in again.",
    expired: "You were signed out. Sign in again.",
    offline: "The server cannot be reached. Check your connection and try again.",
    fillIn: "Enter your name and password.",
    menu: "Conversations", welcome: "What would you like to know?",
    welcomeCount: "I answer from {n} team documents, with the passage behind every claim.",
    steps: "{n} steps · {s} s", open: "Open", search: "Search…", perDay: "Questions per day",
    lastSync: "Last sync", answer: "Answer", gaps: "Knowledge gaps", conversation: "Conversation",
    noData: "Nothing yet", close: "Close", page: "Location",
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
    topic: "Topic", why: "Why", not_covered: "Not in the documents", thumbs_down: "Not helpful",
  },
  ko: {
    title: "teamrag", signIn: "로그인", signOut: "로그아웃", token: "API 토큰",
    tokenHint: "관리자에게 받은 토큰", signInTitle: "로그인하고 팀 문서에 물어보세요",
    wrongPassword: "이름이나 비밀번호가 맞지 않습니다. 다시 확인하거나 관리자에게 비밀번호 재설정을 요청하세요.",
    slowDown: "시도가 너무 많습니다. {s}초 기다린 뒤 다시 로그인하세요.",
    expired: "로그아웃되었습니다. 다시 로그인하세요.",
    offline: "서버에 연결할 수 없습니다. 네트워크를 확인하고 다시 시도하세요.",
    fillIn: "이름과 비밀번호를 입력하세요.",
    menu: "대화 목록", welcome: "무엇이 궁금하세요?",
    welcomeCount: "팀 문서 {n}개에서 찾아 답하고, 모든 답에 근거 문단을 붙입니다.",
    steps: "{n}단계 · {s}초", open: "열기", search: "검색…", perDay: "일별 질문 수",
    lastSync: "마지막 동기화", answer: "답변", gaps: "지식 공백", conversation: "대화",
    noData: "아직 없습니다", close: "닫기", page: "위치",
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
    topic: "주제", why: "이유", not_covered: "문서에 없음", thumbs_down: "도움이 안 됨",
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
  for (const el of document.querySelectorAll("[data-t-label]")) {
    el.setAttribute("aria-label", t(el.dataset.tLabel));
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
  if (response.status === 401) {  // the server's reason is for developers: say what to do
    localStorage.removeItem("teamrag.token");
    showSignIn(t("expired"));
    throw new Error("unauthorized");
  }
  return response;
}
