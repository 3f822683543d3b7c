"""The web chat's answers as HTML: Markdown rendered and sanitized on the server
(adapters/http/markdown.py), a welcome built from the documents an account may see, and
each source's quoted passage, over the real HTTP API on the sample documents."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from adapters.http.markdown import answer_html
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.support.http_support import http_service, http_settings


def test_markdown_becomes_tags_and_only_web_links_survive() -> None:
    html = answer_html(
        "**bold** [1]\n\n- one\n- two\n\n> quoted\n\n[wiki](https://w.example/p?a=1&b=2) "
        "[x](javascript:alert(1)) [y](data:text/html,hi) <script>alert(1)</script> "
        '<img src=x onerror="alert(1)"> <a href="javascript:alert(2)">raw</a>'
    )
    assert "<strong>bold</strong> [1]" in html
    assert html.count("<li>") == 2 and "<blockquote>" in html
    assert '<a href="https://w.example/p?a=1&amp;b=2" target="_blank"' in html
    tags = Tags()
    tags.feed(html)
    assert tags.hrefs == ["https://w.example/p?a=1&b=2"]  # javascript: and data: stay text
    assert tags.names <= {"p", "strong", "ul", "li", "blockquote", "a"}, tags.names
    assert not tags.handlers


class Tags(HTMLParser):
    """What a browser would build from the HTML: its elements, links and handlers."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.hrefs: list[str] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.names.add(tag)
        self.hrefs += [v or "" for k, v in attrs if k == "href"]
        self.handlers += [k for k, _ in attrs if k.startswith("on")]


@pytest.mark.slow
async def test_the_welcome_offers_questions_from_the_documents_the_account_may_see(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    titles = {d.title for d in sample_kb.catalog.documents()}
    async with http_service(sample_kb, http_settings(tmp_path)) as service:
        async with service.client(service.add_user("minji")) as client:
            korean = (await client.get("/api/welcome?language=ko")).json()
            answer = (
                await client.post("/api/chat", json={"query": "How long are backups kept?"})
            ).json()
        async with service.client(service.add_user("other", scopes=("team-b",))) as client:
            elsewhere = (await client.get("/api/welcome")).json()
    assert korean["documents"] == len(titles) and len(korean["questions"]) >= 3
    assert all("문서의 핵심 내용은?" in q for q in korean["questions"])
    assert all(any(t in q for t in titles) for q in korean["questions"])
    assert elsewhere == {"documents": 0, "questions": []}  # no other team's titles
    assert "<" in answer["html"] and answer["sources"]
    assert all(s["quote"] and len(s["quote"]) <= 600 for s in answer["sources"])
    assert not any(s["source"].startswith("/") for s in answer["sources"])
