"""A small website over real HTTP: pages, a sitemap with lastmod, robots.txt, ETags.

Tests change pages while it runs (``set_page``, ``remove``, ``redirects``), break it
(``status``, ``delay_s``) and count the requests it served per path, so "incremental sync fetches
only what changed" is checked on the wire. Run as a module it serves a generated site
of N pages (the sync benchmark) until killed.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections import Counter
from dataclasses import dataclass

from aiohttp import web

from tests.fakes.background import BackgroundApp


@dataclass
class Page:
    body: bytes
    content_type: str = "text/html; charset=utf-8"
    version: int = 1

    @property
    def etag(self) -> str:
        return '"' + hashlib.sha1(self.body).hexdigest()[:16] + '"'

    @property
    def lastmod(self) -> str:
        return f"2026-11-{self.version:02d}T00:00:00+00:00"


def html_page(title: str, text: str, links: list[str] = ()) -> bytes:  # type: ignore[assignment]
    anchors = "".join(f'<li><a href="{href}">{href}</a></li>' for href in links)
    return (
        f"<html><head><title>{title}</title></head><body><nav><ul>{anchors}</ul></nav>"
        f"<main><article><h1>{title}</h1><p>{text}</p></article></main>"
        "<footer>Copyright teamrag test site</footer></body></html>"
    ).encode()


class FakeSite:
    def __init__(self, *, robots: str = "User-agent: *\nDisallow: /private/\n") -> None:
        self.pages: dict[str, Page] = {}
        self.robots = robots
        self.requests: Counter[str] = Counter()
        self.status: dict[str, int] = {}  # path -> forced status
        self.redirects: dict[str, str] = {}  # path -> where a 302 sends the client
        self.delay_s = 0.0
        self.sitemap_lastmod = True
        self._lock = threading.Lock()
        self._server: BackgroundApp | None = None
        self.url = ""

    # -- what tests change ---------------------------------------------------
    def set_page(
        self, path: str, body: bytes, content_type: str = "text/html; charset=utf-8"
    ) -> None:
        with self._lock:
            old = self.pages.get(path)
            version = old.version + 1 if old is not None and old.body != body else 1
            if old is not None and old.body == body:
                version = old.version
            self.pages[path] = Page(body, content_type, version)

    def remove(self, path: str) -> None:
        with self._lock:
            self.pages.pop(path, None)

    def page_requests(self) -> int:
        return sum(n for p, n in self.requests.items() if p not in ("/robots.txt", "/sitemap.xml"))

    def reset_counts(self) -> None:
        self.requests.clear()

    # -- serving --------------------------------------------------------------
    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/{tail:.*}", self._handle)
        return app

    def start(self) -> FakeSite:
        self._server = BackgroundApp(self.app(), handler_cancellation=True)
        self.url = self._server.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        self.requests[path] += 1
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if path in self.status:
            return web.Response(status=self.status[path], text="forced failure")
        if path in self.redirects:
            return web.Response(status=302, headers={"Location": self.redirects[path]})
        if path == "/robots.txt":
            return web.Response(text=self.robots, content_type="text/plain")
        if path == "/sitemap.xml":
            return web.Response(body=self._sitemap(), content_type="application/xml")
        with self._lock:
            page = self.pages.get(path)
        if page is None:
            return web.Response(status=404, text="not found")
        if request.headers.get("If-None-Match") == page.etag:
            return web.Response(status=304, headers={"ETag": page.etag})
        return web.Response(
            body=page.body, headers={"Content-Type": page.content_type, "ETag": page.etag}
        )

    def _sitemap(self) -> bytes:
        with self._lock:
            entries = "".join(
                f"<url><loc>{self.url}{path}</loc>"
                + (f"<lastmod>{page.lastmod}</lastmod>" if self.sitemap_lastmod else "")
                + "</url>"
                for path, page in sorted(self.pages.items())
                if page.content_type.startswith("text/html")
            )
        return (
            '<?xml version="1.0" encoding="UTF-8"?>'
            f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'
        ).encode()


def generated_site(site: FakeSite, pages: int) -> None:
    """``pages`` linked pages (the index links to all) in Korean and English."""
    paths = [f"/docs/page-{i:04d}.html" for i in range(pages)]
    site.set_page("/", html_page("Index", "All pages of the handbook.", paths))
    for i, path in enumerate(paths):
        if i % 2:
            text = f"문서 {i}번: 배포 절차는 {i}단계로 이루어지며 담당자는 팀 {i % 7}입니다."
        else:
            text = f"Page {i}: the deploy runbook step {i} is owned by team {i % 7}."
        site.set_page(path, html_page(f"Handbook page {i}", text * 3))


def main() -> None:  # pragma: no cover - run by benchmarks/sync.py in its own process
    import argparse
    import sys
    import time

    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=2000)
    args = parser.parse_args()
    site = FakeSite()
    generated_site(site, args.pages)
    site.start()
    print(site.url, flush=True)
    try:
        while sys.stdin.readline():
            pass
    finally:
        site.stop()
    time.sleep(0)


if __name__ == "__main__":  # pragma: no cover
    main()
