// Sign-in for people, shared by the chat and the admin page: a name and a password (a
// developer's API token is folded away), and every failure said in the page's language
// with what the person can do about it.
"use strict";
const $ = (id) => document.getElementById(id);

async function signInWithForm(event, done) {
  event.preventDefault();
  const error = $("signin-error");
  error.textContent = "";
  const name = $("name-input").value.trim();
  const password = $("password-input").value;
  const token = $("token-input").value.trim();
  if (token && !name) {
    localStorage.setItem("teamrag.token", token);
    done();
    return;
  }
  if (!name || !password) { error.textContent = t("fillIn"); return; }
  let response;
  try {
    response = await fetch("/api/auth/token", {
      method: "POST", body: new URLSearchParams({ username: name, password }),
    });
  } catch (e) {
    error.textContent = t("offline");
    return;
  }
  if (!response.ok) {
    error.textContent = response.status === 401 ? t("wrongPassword")
      : response.status === 429 ? t("slowDown", { s: response.headers.get("Retry-After") || "60" })
      : `${t("error")} (HTTP ${response.status})`;
    return;
  }
  localStorage.setItem("teamrag.token", (await response.json()).access_token);
  $("password-input").value = "";
  done();
}
