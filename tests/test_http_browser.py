"""The web chat and the admin view in a real browser: Playwright driving Debian's chromium
(`apt-get install -y chromium`) against the real service."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent.retrieval.knowledge_base import KnowledgeBase
from tests.http_support import http_service, http_settings

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture
def chromium() -> str:
    if not Path(CHROMIUM).exists():
        pytest.skip("no Chromium: install it with `apt-get install -y chromium`")
    pytest.importorskip("playwright.async_api", reason="playwright is in the dev extras")
    return CHROMIUM


async def test_sign_in_ask_see_progress_then_a_cited_answer_and_the_admin_view(
    chromium: str, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    from playwright.async_api import async_playwright, expect

    async with (
        http_service(sample_kb, http_settings(tmp_path)) as service,
        async_playwright() as playwright,
    ):
        token = service.add_user("boss", is_admin=True)
        browser = await playwright.chromium.launch(executable_path=chromium, args=ARGS)
        try:
            context = await browser.new_context(locale="ko-KR")
            page = await context.new_page()
            await page.goto(service.url)
            await expect(page.locator("#sign-in")).to_have_text("로그인")  # Korean by default
            await page.fill("#token-input", token)
            await page.click("#sign-in")
            await expect(page.locator("#app")).to_be_visible()

            # Record the order in which progress and the answer's citations appear.
            await page.evaluate(
                """() => {
                    window.seen = [];
                    new MutationObserver(() => {
                        if (document.querySelector('.steps li') && !seen.includes('progress'))
                            seen.push('progress');
                        if (document.querySelector('a.cite') && !seen.includes('cited'))
                            seen.push('cited');
                    }).observe(document.body, {childList: true, subtree: true});
                }"""
            )
            await page.fill("#question", "Postgres 백업은 며칠 동안 보관되나요?")
            await page.click("#send")
            answer = page.locator(".message.assistant").last
            await expect(answer.locator("a.cite").first).to_be_visible()
            assert await page.evaluate("window.seen") == ["progress", "cited"]
            assert await answer.locator(".steps li").count() >= 2
            await expect(answer.locator(".sources li").first).to_be_visible()
            await answer.locator("a.cite").first.click()
            await expect(answer.locator(".sources li.highlight")).to_have_count(1)
            await expect(page.locator("#conversations li")).to_have_count(1)

            await answer.locator(".feedback .down").click()
            await answer.locator(".feedback .comment").fill("표가 빠졌어요")
            await answer.locator(".feedback .send").click()
            await expect(answer.locator(".feedback .thanks")).to_have_text("의견 감사합니다")

            await page.goto(f"{service.url}/admin")
            documents = page.locator("#documents")
            await expect(documents).to_contain_text("public")
            titles = [d.title for d in sample_kb.catalog.documents()]
            await expect(documents).to_contain_text(titles[0])
            await expect(page.locator("#feedback")).to_contain_text("표가 빠졌어요")
            await expect(page.locator("#usage")).to_contain_text("http:http:boss")
            # Voted down: listed among the questions without an answer, with the comment.
            await expect(page.locator("#unanswered")).to_contain_text("표가 빠졌어요")
        finally:
            await browser.close()
