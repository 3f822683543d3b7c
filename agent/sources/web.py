"""The ``web`` kind: a website from a start URL (same-site crawl) or a sitemap.

Incremental without re-reading the site: a sitemap ``<lastmod>`` equal to the one
seen last time skips the page without a request; otherwise a conditional GET
(``If-None-Match`` / ``If-Modified-Since``) lets the server answer 304. A crawl keeps
each page's links in the checkpoint, so a 304 page still leads to its children.
robots.txt is respected; a page the site removed (404/410), or no longer links to,
leaves the knowledge base; a page that fails (5xx, timeout) keeps its old version.
Every fetch passes the address policy (agent/net/address_policy.py); a redirect is
followed within the site only, and one to another site is reported, not fetched.
"""

from __future__ import annotations

import re
import urllib.robotparser
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit
from xml.etree import ElementTree

import httpx

from agent.sources import http
from agent.sources.base import (
    Checkpoint,
    Item,
    KindContext,
    SourceError,
    SourceSpec,
    failed,
    item,
    skipped,
    unchanged,
)

ROBOTS_AGENT = "teamrag"
FETCH_THREADS = 8
_WINDOW = 32  # pages fetched ahead of ingestion at most: bounds memory on large pages
_CHARSET = re.compile(r"charset=([\w.-]+)", re.IGNORECASE)


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.hrefs.append(href)


def page_links(html_text: str, base: str) -> list[str]:
    parser = _Links()
    parser.feed(html_text)
    links: list[str] = []
    for href in parser.hrefs:
        url = urldefrag(urljoin(base, href.strip()))[0]
        if url.startswith(("http://", "https://")):
            links.append(url)
    return list(dict.fromkeys(links))


def sitemap_entries(xml: bytes) -> tuple[list[tuple[str, str]], list[str]]:
    """(page URL, lastmod) pairs of a sitemap, and the child sitemaps of a sitemap index."""
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as exc:
        raise SourceError(f"the sitemap is not valid XML ({exc})") from None
    pages: list[tuple[str, str]] = []
    children: list[str] = []
    for node in root:
        tag = node.tag.rsplit("}", 1)[-1]
        loc = next((c.text or "" for c in node if c.tag.endswith("loc")), "").strip()
        lastmod = next((c.text or "" for c in node if c.tag.endswith("lastmod")), "").strip()
        if loc and tag == "url":
            pages.append((loc, lastmod))
        elif loc and tag == "sitemap":
            children.append(loc)
    return pages, children


@dataclass
class _Visit:
    url: str
    result: Item | None  # None: the page is gone
    links: list[str] = field(default_factory=list)
    entry: dict[str, Any] | None = None  # what the checkpoint keeps for the page


class WebSource:
    def __init__(self, spec: SourceSpec, ctx: KindContext) -> None:
        if not spec.target.startswith(("http://", "https://")):
            raise ValueError(f"a web source needs an http(s):// URL, not {spec.target!r}")
        self.spec = spec
        self.start = spec.target
        self.site = urlsplit(spec.target).netloc
        self.max_pages = int(spec.option("max_pages", 500))
        self.depth = int(spec.option("depth", 3))
        self.limit = http.max_bytes(spec)
        self.http = http.client(ctx.timeout_s, ctx.policy(spec))
        self._pages: dict[str, dict[str, Any]] = {}
        self._robots: urllib.robotparser.RobotFileParser | None = None

    @property
    def is_sitemap(self) -> bool:
        return urlsplit(self.start).path.endswith(".xml")

    # -- the interface -----------------------------------------------------
    def load_all(self) -> Iterator[Item]:
        return self._scan({})

    def changed_since(self, checkpoint: Checkpoint) -> Iterator[Item]:
        return self._scan(checkpoint.get("pages", {}))

    def existing(self) -> set[str]:
        return set(self._pages)

    def checkpoint(self) -> Checkpoint:
        return {"pages": self._pages}

    def close(self) -> None:
        self.http.close()

    # -- scanning -----------------------------------------------------------
    def _scan(self, known: dict[str, dict[str, Any]]) -> Iterator[Item]:
        self._pages = {}
        self._robots = self._read_robots()
        with ThreadPoolExecutor(FETCH_THREADS, thread_name_prefix="teamrag-web") as pool:
            if self.is_sitemap:
                pages = self._sitemap_pages()[: self.max_pages]
                yield from self._visit_all(pool, pages, known)
                return
            seen = {self.start}
            level = [(self.start, "")]
            budget = self.max_pages
            for depth in range(self.depth + 1):
                if not level or budget <= 0:
                    break
                level = level[:budget]
                budget -= len(level)
                following: list[tuple[str, str]] = []
                for visit in self._visits(pool, level, known):
                    if visit.url == self.start and visit.result is None:
                        raise SourceError(f"{self.start}: the start page is gone (HTTP 404/410)")
                    if visit.result is not None:
                        yield visit.result
                    if depth < self.depth:
                        for link in visit.links:
                            if link not in seen and self._same_site(link):
                                seen.add(link)
                                following.append((link, ""))
                level = following

    def _visit_all(
        self, pool: ThreadPoolExecutor, pages: list[tuple[str, str]], known: dict[str, Any]
    ) -> Iterator[Item]:
        for visit in self._visits(pool, pages, known):
            if visit.result is not None:
                yield visit.result

    def _visits(
        self, pool: ThreadPoolExecutor, pages: list[tuple[str, str]], known: dict[str, Any]
    ) -> Iterator[_Visit]:
        for start in range(0, len(pages), _WINDOW):
            window = pages[start : start + _WINDOW]
            for visit in pool.map(lambda p: self._visit(p[0], known.get(p[0]), p[1]), window):
                if visit.entry is not None:
                    self._pages[visit.url] = visit.entry
                yield visit

    def _visit(self, url: str, known: dict[str, Any] | None, lastmod: str) -> _Visit:
        old_links = list(known.get("links", [])) if known else []
        if self._robots is not None and not self._robots.can_fetch(ROBOTS_AGENT, url):
            return _Visit(url, skipped(url, "disallowed by the site's robots.txt"))
        if known and lastmod and known.get("lastmod") == lastmod:
            return _Visit(url, unchanged(url), old_links, known)  # the sitemap says so
        headers = {}
        if known and known.get("etag"):
            headers["If-None-Match"] = known["etag"]
        if known and known.get("modified"):
            headers["If-Modified-Since"] = known["modified"]
        try:
            page = http.get(self.http, url, limit=self.limit, headers=headers)
        except httpx.HTTPError as exc:
            if url == self.start:
                raise SourceError(http.describe(exc, url)) from None
            return _Visit(url, failed(url, http.describe(exc, url)), old_links, known)
        if page.redirect is not None:
            reason = f"redirects to {page.redirect}, another site; not followed"
            if url == self.start:
                raise SourceError(f"{url} {reason} (add that URL as the source instead)")
            return _Visit(url, skipped(url, reason))
        if page.status == 304 and known:
            return _Visit(url, unchanged(url), old_links, {**known, "lastmod": lastmod})
        if page.status in (404, 410):
            return _Visit(url, None)
        if page.status >= 400:
            reason = f"HTTP {page.status} from {url}"
            if url == self.start:
                raise SourceError(f"{reason}; the site is down or the URL is wrong")
            return _Visit(url, failed(url, reason + "; the old version stays"), old_links, known)
        if page.too_large:
            return _Visit(
                url, skipped(url, f"larger than {self.limit} bytes; raise --max-bytes to load it")
            )
        content_type = page.headers.get("content-type", "")
        name = http.loader_name(content_type)
        if name is None:
            return _Visit(url, skipped(url, f"not a readable page ({content_type or 'no type'})"))
        body = _utf8(page.body, content_type)
        links = (
            page_links(body.decode("utf-8", "replace"), page.url) if name.endswith("html") else []
        )
        entry = {
            "etag": page.headers.get("etag", ""),
            "modified": page.headers.get("last-modified", ""),
            "lastmod": lastmod,
            "links": links,
        }
        return _Visit(url, item(url, name, body, link=url), links, entry)

    def _same_site(self, url: str) -> bool:
        return urlsplit(url).netloc == self.site

    def _read_robots(self) -> urllib.robotparser.RobotFileParser | None:
        parts = urlsplit(self.start)
        url = f"{parts.scheme}://{parts.netloc}/robots.txt"
        try:
            response = http.get(self.http, url, limit=512 * 1024)  # RFC 9309: 500 KiB at least
        except httpx.HTTPError as exc:
            raise SourceError(http.describe(exc, url)) from None
        if response.status >= 500:
            # RFC 9309: an unreachable robots.txt means "crawl nothing" for now.
            raise SourceError(f"{url} answered HTTP {response.status}; trying again later")
        if response.status >= 400 or response.redirect is not None or response.too_large:
            return None  # no robots.txt on this site: everything is allowed
        robots = urllib.robotparser.RobotFileParser(url)
        robots.parse(response.body.decode("utf-8", "replace").splitlines())
        return robots

    def _sitemap_pages(self) -> list[tuple[str, str]]:
        pages: list[tuple[str, str]] = []
        queue, seen = [self.start], set[str]()
        while queue and len(seen) < 50:
            url = queue.pop(0)
            seen.add(url)
            try:
                fetched = http.get(self.http, url, limit=50 * 1024 * 1024)
            except httpx.HTTPError as exc:
                raise SourceError(http.describe(exc, url)) from None
            if fetched.redirect is not None:
                raise SourceError(
                    f"the sitemap {url} redirects to {fetched.redirect}, another site; not "
                    "followed (add that URL as the source instead)"
                )
            if fetched.status >= 400:
                raise SourceError(f"the sitemap {url} answered HTTP {fetched.status}")
            found, children = sitemap_entries(fetched.body)
            pages.extend((u, m) for u, m in found if self._same_site(u))
            queue.extend(c for c in children if c not in seen and self._same_site(c))
        return list(dict.fromkeys(pages))


def _utf8(body: bytes, content_type: str) -> bytes:
    """Loaders read UTF-8: re-encode a page served in another charset (EUC-KR, say)."""
    match = _CHARSET.search(content_type)
    charset = match.group(1).lower() if match else "utf-8"
    if charset in ("utf-8", "utf8"):
        return body
    try:
        return body.decode(charset).encode("utf-8")
    except (LookupError, UnicodeDecodeError):
        return body
