"""The HTTP service's protections over real HTTP: browser headers on the pages, the
request body cap (declared and streamed), the /v1 history cap, inputs that used to
fail with 500, and the ops endpoints kept off the service port."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from adapters.http.app import STATIC
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.support.http_support import http_service, http_settings

pytestmark = pytest.mark.slow


@pytest.fixture
async def anonymous(sample_kb: KnowledgeBase, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """A client without a token on the service with its default settings."""
    async with (
        http_service(sample_kb, http_settings(tmp_path)) as service,
        service.client() as client,
    ):
        yield client


async def test_the_pages_send_a_strict_policy_and_no_framing(anonymous: httpx.AsyncClient) -> None:
    for path in ("/", "/admin", "/static/app.js", "/api/conversations"):
        headers = (await anonymous.get(path)).headers
        policy = headers["content-security-policy"]
        directives = dict(
            [*d.split(" ", 1), ""][:2] for d in (p.strip() for p in policy.split(";"))
        )
        assert directives["script-src"] == "'self'", (path, policy)
        assert "unsafe-inline" not in policy and "unsafe-eval" not in policy
        assert directives["frame-ancestors"] == "'none'"
        assert directives["object-src"] == "'none'"
        assert headers["x-frame-options"] == "DENY"
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
    docs = (await anonymous.get("/docs")).headers  # Swagger UI: no framing either
    assert "frame-ancestors 'none'" in docs["content-security-policy"]


@pytest.mark.parametrize("page", ["index.html", "admin.html"])
def test_the_pages_have_no_inline_script_or_style(page: str) -> None:
    # What the policy would block: the pages must work without any of it.
    html = (STATIC / page).read_text()
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", html) == []
    assert "<style" not in html and " style=" not in html
    assert re.findall(r"\son[a-z]+\s*=", html) == []
    for name in re.findall(r'<script src="/static/([^"]+)"', html):  # nor in what they build
        script = (STATIC / name).read_text()
        assert " style=" not in script and re.findall(r"\son[a-z]+=", script) == [], name


def test_the_page_script_links_only_http_sources() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node: install nodejs to run the page's rendering rules")
    sources = [
        {"link": "javascript:alert(document.cookie)", "title": "Policy", "source": "p.html"},
        {"link": " JAVASCRIPT:alert(1)", "title": "Policy", "source": "p.html"},
        {"link": "data:text/html,<script>alert(1)</script>", "title": "D", "source": "d.html"},
        {"link": "https://wiki.example.com/p?a=1&b=2", "title": "Wiki", "source": "w"},
    ]
    render = json.dumps(str(STATIC / "render.js"))
    program = (
        "const vm = require('vm'), fs = require('fs'); const page = {};"
        f"vm.runInNewContext(fs.readFileSync({render}, 'utf8'), page);"
        f"console.log(JSON.stringify({json.dumps(sources)}.map(page.sourceItemHtml)));"
    )
    done = subprocess.run([node, "-e", program], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rendered = json.loads(done.stdout)
    for html in rendered[:3]:
        assert "href" not in html and "<a" not in html, html
        assert "javascript" not in html.lower() and "<script" not in html
    assert 'href="https://wiki.example.com/p?a=1&amp;b=2"' in rendered[3]


async def _raw_request(url: str, head: str, parts: list[bytes]) -> bytes:
    """Send ``head`` and then ``parts`` on a raw connection, leaving the body unfinished,
    and return what the server answers meanwhile: it must answer before the rest."""
    address = urlsplit(url)
    reader, writer = await asyncio.open_connection(address.hostname, address.port)
    try:
        writer.write(head.encode())
        for part in parts:
            writer.write(part)
        await writer.drain()
        # The server stops reading and closes after its answer; no end of body is sent.
        return await asyncio.wait_for(reader.read(), timeout=30)
    finally:
        writer.close()


async def test_a_body_over_the_cap_is_413_before_it_is_read(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    settings = http_settings(tmp_path, http_max_body_bytes=4096)
    async with http_service(sample_kb, settings) as service:
        token = service.add_user("minji")
        # 100 MB declared, 10 bytes sent: refused at once, without a token.
        declared = (
            "POST /api/chat HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: 100000000\r\n\r\n"
        )
        answer = await _raw_request(service.url, declared, [b'{"query": '])
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        assert b"TEAMRAG_HTTP_MAX_BODY_BYTES" in answer and b"4096 bytes" in answer
        assert b"frame-ancestors" in answer  # the refusal has the headers too

        # Chunked, no length: refused once past the cap, before the body ends.
        chunked = (
            "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n"
        )
        chunk = b"x" * 1000
        parts = [b"%x\r\n%s\r\n" % (len(chunk), chunk)] * 6  # 6000 bytes, no final chunk
        answer = await _raw_request(service.url, chunked, parts)
        assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
        error = json.loads(answer.split(b"\r\n\r\n", 1)[1])
        assert "TEAMRAG_HTTP_MAX_BODY_BYTES" in error["error"]["message"]  # OpenAI's shape

        async with service.client(token) as client:  # a body under the cap still works
            assert (await client.post("/api/chat", json={"query": "안녕"})).status_code == 200


async def test_v1_history_over_the_limit_is_413_and_costs_no_quota(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    settings = http_settings(tmp_path, http_max_history_chars=1000, rate_limit_per_minute=1)
    async with (
        http_service(sample_kb, settings) as service,
        service.client(service.add_user("minji")) as client,
    ):
        history = [{"role": "user", "content": "가" * 600}] * 2
        too_long = await client.post(
            "/v1/chat/completions",
            json={"messages": [*history, {"role": "user", "content": "hello"}]},
        )
        assert too_long.status_code == 413, too_long.text
        message = too_long.json()["error"]["message"]
        assert "1205 characters" in message and "TEAMRAG_HTTP_MAX_HISTORY_CHARS" in message
        fits = await client.post(
            "/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]}
        )
        assert fits.status_code == 200, fits.text  # the one question of the minute


async def test_a_huge_offset_and_a_lone_surrogate_are_422_and_cost_no_quota(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    settings = http_settings(tmp_path, rate_limit_per_minute=1)
    async with (
        http_service(sample_kb, settings) as service,
        service.client(service.add_user("minji")) as client,
    ):
        page = await client.get("/api/conversations", params={"offset": "9" * 20})
        assert page.status_code == 422 and "offset" in page.json()["detail"], page.text
        headers = {"Content-Type": "application/json"}
        lone = await client.post(
            "/api/chat", content=b'{"query": "backups \\ud800"}', headers=headers
        )
        assert lone.status_code == 422, lone.text
        assert "surrogate" in lone.json()["detail"] and "query" in lone.json()["detail"]
        earlier = (
            b'{"messages": [{"role": "user", "content": "\\udfff"}, '
            b'{"role": "assistant", "content": "x"}, {"role": "user", "content": "hi"}]}'
        )
        v1 = await client.post("/v1/chat/completions", content=earlier, headers=headers)
        assert v1.status_code == 422 and "messages[0]" in v1.json()["error"]["message"]
        # Nothing above counted: the minute's one question is still there.
        assert (await client.post("/api/chat", json={"query": "안녕"})).status_code == 200
        assert (await client.post("/api/chat", json={"query": "안녕"})).status_code == 429


async def test_readyz_and_metrics_are_not_on_the_service_port(
    anonymous: httpx.AsyncClient,
) -> None:
    assert (await anonymous.get("/healthz")).text == "ok"
    assert (await anonymous.get("/readyz")).status_code == 404
    assert (await anonymous.get("/metrics")).status_code == 404
