"""The ``confluence`` kind: the current pages of one space (Confluence Cloud or Server /
Data Center REST API), optionally their attachments.

Listing asks only for ids and version numbers; a page's body (storage format, XHTML)
is fetched when its version moved. Cloud authenticates with an account e-mail and an
API token (``--user-env``, ``--token-env``); Server with a personal access token.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from agent.sources.base import Item, KindContext, SourceSpec, item
from agent.sources.listed import Entry, ListedSource

PAGE_SIZE = 50


class ConfluenceSource(ListedSource):
    service = "Confluence"

    def __init__(self, spec: SourceSpec, ctx: KindContext) -> None:
        base = str(spec.option("api_url", "")).rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise ValueError(
                "confluence sources need --api-url: your site, e.g. "
                "https://your-team.atlassian.net/wiki (Cloud) or https://wiki.example.com"
            )
        token = ctx.secret(spec, "token_env", "Confluence API token")
        if spec.option("user_env"):
            user = ctx.secret(spec, "user_env", "Confluence account e-mail")
            auth = "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode()
        else:
            auth = f"Bearer {token}"
        super().__init__(spec, ctx, {"Authorization": auth, "Accept": "application/json"})
        self.base = base
        self.space = spec.target
        self.attachments = bool(spec.option("attachments", False))

    def entries(self) -> Iterator[Entry]:
        for page in self._paged(
            "/rest/api/content",
            {"spaceKey": self.space, "type": "page", "status": "current", "expand": "version"},
        ):
            key = f"{self.base}/pages/viewpage.action?pageId={page['id']}"
            yield Entry(str(page["id"]), str(page["version"]["number"]), key, page["title"], page)
            if self.attachments:
                yield from self._attachments(str(page["id"]))

    def fetch(self, entry: Entry) -> Item:
        if entry.id.startswith("att-"):
            download = entry.extra["_links"]["download"]
            return self.download(entry, self._absolute(download), entry.title)
        page = self.api(
            "GET", f"{self.base}/rest/api/content/{entry.id}", params={"expand": "body.storage"}
        )
        body = page.get("body", {}).get("storage", {}).get("value", "")
        title = html.escape(entry.title)
        document = f"<html><head><title>{title}</title></head><body><h1>{title}</h1>{body}"
        return item(entry.key, "page.html", (document + "</body></html>").encode(), link=entry.key)

    def _attachments(self, page_id: str) -> Iterator[Entry]:
        path = f"/rest/api/content/{page_id}/child/attachment"
        for attachment in self._paged(path, {"expand": "version"}):
            download = attachment["_links"]["download"]
            key = self._absolute(download).split("?")[0]
            version = str(attachment.get("version", {}).get("number", "1"))
            yield Entry(
                "att-" + str(attachment["id"]), version, key, attachment["title"], attachment
            )

    def _paged(self, path: str, params: dict[str, Any]) -> Iterator[dict[str, Any]]:
        start = 0
        while True:
            page = self.api(
                "GET", self.base + path, params={**params, "start": start, "limit": PAGE_SIZE}
            )
            results = page.get("results", [])
            yield from results
            if not results or "next" not in page.get("_links", {}):
                return
            start += len(results)

    def _absolute(self, link: str) -> str:
        if link.startswith(("http://", "https://")):
            return link
        # Download links are relative to the site's context path (/wiki on Cloud); some
        # servers include that path already.
        path = urlsplit(self.base).path
        if path and link.startswith(path + "/"):
            return self.base[: -len(path)] + link
        return self.base + link
