#!/bin/sh
# Refresh the web chat and admin screenshots in docs/screenshots/ (chat-welcome-*, chat-*,
# admin-*, admin-gap-* (a knowledge gap's conversation) at 1280 and 390 px): the browser
# test takes them while it checks the pages.
# Needs Debian's chromium and a Korean font (apt-get install -y chromium fonts-nanum).
set -eu
cd "$(dirname "$0")/.."
TEAMRAG_SCREENSHOTS=docs/screenshots PYTHONPATH="$PWD" \
  "${PYTHON:-.venv/bin/python}" -m pytest -q tests/test_http_browser.py
