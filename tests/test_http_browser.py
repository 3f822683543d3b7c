"""The web chat and the admin view in a real browser: Playwright driving Debian's chromium
(`apt-get install -y chromium`) against the real service, at a laptop's 1280x800 and a
phone's 390x844.

Screenshots of both pages at both widths are written to ``TEAMRAG_SCREENSHOTS`` when it
is set (``scripts/screenshots.sh`` sets it to docs/screenshots), else to the test's
temporary folder.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI
from tests.support.agent_support import script_answer
from tests.support.http_support import http_service, http_settings

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
SIZES = [(1280, 800), (390, 844)]
PASSWORD = "correct horse battery"
# What a model writes: bold, a list, a quote, a link, a citation, and a javascript: link
# copied from a document, which must stay text.
MARKDOWN_ANSWER = (
    "**Postgres backups** are kept for **35 days** [1].\n\n"
    "- nightly full backups\n- restores are tested monthly\n\n"
    "> Ask the on-call engineer first.\n\n"
    "See the [runbook](https://wiki.example.com/runbook) or "
    "[this](javascript:alert(document.cookie))."
)


@pytest.fixture
def chromium() -> str:
    if not Path(CHROMIUM).exists():
        pytest.skip("no Chromium: install it with `apt-get install -y chromium`")
    pytest.importorskip("playwright.async_api", reason="playwright is in the dev extras")
    return CHROMIUM


@pytest.fixture
def shots(tmp_path: Path) -> Iterator[Path]:
    folder = Path(os.environ.get("TEAMRAG_SCREENSHOTS") or tmp_path / "shots")
    folder.mkdir(parents=True, exist_ok=True)
    yield folder


def watch(page: Any) -> list[str]:
    """Console errors and failed requests of a page (a 401 of a deliberately wrong
    password excepted)."""
    problems: list[str] = []

    def expected(url: str) -> bool:
        return url.endswith("/api/auth/token")

    page.on(
        "console",
        lambda m: (
            problems.append(f"console: {m.text}")
            if m.type == "error" and not expected(m.location.get("url", ""))
            else None
        ),
    )
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url}"))
    page.on(
        "response",
        lambda r: (
            problems.append(f"{r.status}: {r.url}")
            if r.status >= 400 and not expected(r.url)
            else None
        ),
    )
    return problems


async def sign_in(page: Any, url: str, name: str) -> None:
    from playwright.async_api import expect

    await page.goto(url)
    # People first: name and password; the developer's token is folded away.
    await expect(page.locator("#name-input")).to_be_visible()
    await expect(page.locator("#token-input")).to_be_hidden()
    await page.fill("#name-input", name)
    await page.fill("#password-input", "not the password")
    await page.click("#sign-in")
    await expect(page.locator("#signin-error")).to_contain_text("비밀번호가 맞지 않습니다")
    await page.fill("#password-input", PASSWORD)
    await page.click("#sign-in")


async def fits_the_width(page: Any, width: int) -> None:
    scroll_width = await page.evaluate("document.scrollingElement.scrollWidth")
    assert scroll_width <= width, f"{scroll_width} px wide at {width} px"


async def every_row_shows_its_chunks_and_last_sync(page: Any, width: int) -> None:
    """Every document's chunks and last sync lie on screen (a phone shows each row as a
    card of "label: value" lines, the label from the cell's data-label)."""
    cells = await page.evaluate(
        """() => Array.from(document.querySelectorAll('#documents tbody tr')).map((tr) => {
            const [chunks, synced] = [tr.cells[3], tr.cells[4]];
            return {chunks: chunks.textContent, right: Math.max(
                chunks.getBoundingClientRect().right, synced.getBoundingClientRect().right),
                label: getComputedStyle(chunks, '::before').content};
        })"""
    )
    assert cells, "no document rows"
    off = [c for c in cells if c["right"] > width]
    assert not off, f"chunks or last sync past the {width} px screen: {off}"
    if width < 500:
        assert {c["label"] for c in cells} == {'"청크"'}, cells


async def test_a_markdown_answer_renders_folds_its_steps_cites_and_fits_a_phone(
    chromium: str, sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI, shots: Path
) -> None:
    from playwright.async_api import async_playwright, expect

    script_answer(fake_llm, MARKDOWN_ANSWER)
    titles = {d.title for d in sample_kb.catalog.documents()}
    async with (
        http_service(sample_kb, http_settings(tmp_path, llm=fake_llm)) as service,
        async_playwright() as playwright,
    ):
        service.ctx.accounts.add("minji", password=PASSWORD)
        browser = await playwright.chromium.launch(executable_path=chromium, args=ARGS)
        try:
            for width, height in SIZES:
                phone = width < 500
                context = await browser.new_context(
                    locale="ko-KR",
                    viewport={"width": width, "height": height},
                    has_touch=phone,
                    is_mobile=phone,
                )
                page = await context.new_page()
                problems = watch(page)
                await sign_in(page, service.url, "minji")

                # The welcome: questions about the newest documents, in Korean.
                suggestions = page.locator("#suggestions .suggestion")
                await expect(suggestions.first).to_be_visible()
                offered = await suggestions.all_inner_texts()
                assert len(offered) >= 3, offered
                assert all(any(title in q for title in titles) for q in offered), offered
                await expect(page.locator("#welcome h2")).to_have_text("무엇이 궁금하세요?")
                if phone:
                    await expect(page.locator("#menu")).to_be_visible()
                    await expect(page.locator("#sidebar")).not_to_be_in_viewport()
                    await fits_the_width(page, width)
                await page.screenshot(path=str(shots / f"chat-welcome-{width}.png"))

                await page.fill("#question", "Postgres 백업은 며칠 동안 보관되나요?")
                send = page.locator("#send")
                await expect(send).to_be_in_viewport()
                await (send.tap() if phone else send.click())
                answer = page.locator(".message.assistant").last
                await expect(answer.locator(".answer strong").first).to_have_text(
                    "Postgres backups"
                )
                rendered = answer.locator(".answer")
                assert await rendered.locator("li").count() == 2
                await expect(
                    rendered.locator("a[href='https://wiki.example.com/runbook']")
                ).to_be_visible()
                assert await page.locator("a[href^='javascript' i]").count() == 0
                text = await page.locator("body").inner_text()
                assert "**" not in text
                assert not [line for line in text.splitlines() if line.startswith("> ")]

                # The steps folded into one line; they show only when it is opened.
                fold = answer.locator("details.fold")
                folded = re.compile(r"^\d+단계 · \d+\.\d초$")
                await expect(fold.locator("summary")).to_have_text(folded)
                await expect(answer.locator(".steps li").first).to_be_hidden()
                await fold.locator("summary").click()
                await expect(answer.locator(".steps li").first).to_be_visible()
                await fold.locator("summary").click()

                # [1] opens the passage, named by its title, not a server path.
                await answer.locator("a.cite").first.click()
                passage = answer.locator(".passage")
                await expect(passage.locator("blockquote")).to_contain_text("35")
                head = await passage.locator(".passage-head").inner_text()
                assert any(title in head for title in titles) and "samples/" not in head, head
                assert "samples/kb" not in await answer.locator(".sources").inner_text()

                if phone:
                    await fits_the_width(page, width)
                    box = await send.bounding_box()
                    assert box, "the send button has no box"
                    assert box["x"] + box["width"] <= width and box["y"] + box["height"] <= height
                    await page.click("#menu")
                    await expect(page.locator("#conversations li").first).to_be_in_viewport()
                    await page.click("#scrim", position={"x": width - 20, "y": 300})
                    await expect(page.locator("#sidebar")).not_to_be_in_viewport()
                await page.screenshot(path=str(shots / f"chat-{width}.png"))
                assert problems == [], problems
                await context.close()
        finally:
            await browser.close()


NOT_COVERED = "How do I book a meeting room?"


async def test_sign_in_ask_see_progress_then_a_cited_answer_and_the_admin_view(
    chromium: str, sample_kb: KnowledgeBase, tmp_path: Path, shots: Path
) -> None:
    from playwright.async_api import async_playwright, expect

    async with (
        http_service(sample_kb, http_settings(tmp_path)) as service,
        async_playwright() as playwright,
    ):
        service.ctx.accounts.add("boss", password=PASSWORD, is_admin=True)
        token = service.ctx.tokens.issue("boss")
        async with service.client(token) as client:  # a gap, asked through the API
            missing = (await client.post("/api/chat", json={"query": NOT_COVERED})).json()
            assert missing["covered"] is False
        browser = await playwright.chromium.launch(executable_path=chromium, args=ARGS)
        try:
            context = await browser.new_context(locale="ko-KR")
            page = await context.new_page()
            problems = watch(page)
            await page.goto(service.url)
            await expect(page.locator("#sign-in")).to_have_text("로그인")  # Korean by default
            await page.click("#token-fold summary")  # the developer's way in, folded
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
            await expect(page.locator("#conversations li")).to_have_count(2)

            await answer.locator(".feedback .down").click()
            await answer.locator(".feedback .comment").fill("표가 빠졌어요")
            await answer.locator(".feedback .send").click()
            await expect(answer.locator(".feedback .thanks")).to_have_text("의견 감사합니다")
            await context.close()

            for width, height in SIZES:
                context = await browser.new_context(
                    locale="ko-KR", viewport={"width": width, "height": height}
                )
                await context.add_init_script(f"localStorage.setItem('teamrag.token', {token!r})")
                page = await context.new_page()
                problems += watch(page)
                await page.goto(f"{service.url}/admin")
                documents = page.locator("#documents")
                await expect(documents).to_contain_text("public")
                titles = [d.title for d in sample_kb.catalog.documents()]
                await expect(documents).to_contain_text(titles[0])
                assert "/work/" not in await documents.inner_text()  # no server paths
                rows = documents.locator("tr:not(.hidden)")
                everything = await rows.count()
                await page.fill("[data-filter=documents]", "handbook")
                await expect(rows).to_have_count(2)  # the header and the handbook
                assert everything > 2
                await expect(page.locator("#feedback")).to_contain_text("표가 빠졌어요")
                await expect(page.locator("#feedback details").first).to_contain_text("Postgres")
                await expect(page.locator("#usage")).to_contain_text("http:http:boss")
                await expect(page.locator("#per-day rect").first).to_be_attached()
                # The gaps: the not-covered question, with its conversation, and the voted-down.
                gaps = page.locator("#gaps")
                await expect(gaps).to_contain_text(NOT_COVERED)
                await expect(gaps).to_contain_text("표가 빠졌어요")
                await page.fill("[data-filter=documents]", "")
                await expect(rows).to_have_count(everything)
                await fits_the_width(page, width)
                await every_row_shows_its_chunks_and_last_sync(page, width)
                await page.screenshot(path=str(shots / f"admin-{width}.png"), full_page=True)
                link = gaps.locator("li", has_text=NOT_COVERED).locator("button.link")
                conversation = missing["conversation_id"]
                assert await link.get_attribute("data-conversation") == conversation
                # The gap's link opens its conversation read only, here, not in the chat.
                await link.click()
                panel = page.locator("#gap-conversation")
                await expect(panel.locator(".message.user").first).to_have_text(NOT_COVERED)
                await expect(panel.locator(".message.assistant .answer").first).to_be_visible()
                assert await panel.locator(".feedback").count() == 0  # no thumbs
                assert page.url == f"{service.url}/admin"
                await fits_the_width(page, width)
                await page.screenshot(path=str(shots / f"admin-gap-{width}.png"))
                await page.click("#gap-conversation-close")
                await expect(panel).to_be_hidden()
                await context.close()
            assert problems == [], problems
        finally:
            await browser.close()
