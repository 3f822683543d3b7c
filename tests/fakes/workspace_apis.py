"""Fake Confluence, Notion and Google Drive REST APIs over real HTTP, with just the
endpoints the source kinds call. Tests edit the content while they run and count the
requests each path received."""

from __future__ import annotations

import base64
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.background import BackgroundApp

TOKEN = "test-token"
BASIC = "Basic " + base64.b64encode(f"me@example.com:{TOKEN}".encode()).decode()


@dataclass
class Doc:
    title: str
    body: str  # Confluence: XHTML; Notion: paragraphs split on blank lines; Drive: bytes as text
    version: int = 1
    kind: str = ""  # Drive: the mimeType
    parent: str = ""  # Drive: folder id; Notion tree: parent page id
    raw: bytes = b""  # binary content (a PDF, an XLSX): Drive files and exports, attachments


@dataclass
class FakeWorkspace:
    """One server, three APIs: /confluence/..., /notion/..., /drive/..."""

    confluence: dict[str, Doc] = field(default_factory=dict)  # page id -> page
    attachments: dict[str, tuple[str, Doc]] = field(default_factory=dict)  # id -> (page, doc)
    notion_db: dict[str, Doc] = field(default_factory=dict)
    notion_pages: dict[str, Doc] = field(default_factory=dict)  # tree: id -> page (parent set)
    drive: dict[str, Doc] = field(default_factory=dict)  # file id -> file
    requests: Counter[str] = field(default_factory=Counter)
    fail: dict[str, int] = field(default_factory=dict)  # path -> forced status
    url: str = ""

    def start(self) -> FakeWorkspace:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._server = BackgroundApp(app)
        self.url = self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def hits(self, prefix: str) -> int:
        return sum(n for path, n in self.requests.items() if path.startswith(prefix))

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        self.requests[path] += 1
        if path in self.fail:
            return web.json_response({"message": "forced"}, status=self.fail[path])
        if request.headers.get("Authorization") not in (f"Bearer {TOKEN}", BASIC):
            return web.json_response({"message": "unauthorized"}, status=401)
        if path.startswith("/confluence/"):
            return self._confluence(request, path.removeprefix("/confluence"))
        if path.startswith("/notion/"):
            return await self._notion(request, path.removeprefix("/notion"))
        if path.startswith("/drive/"):
            return self._drive(request, path.removeprefix("/drive"))
        return web.json_response({"message": "no such API"}, status=404)

    # -- Confluence -----------------------------------------------------------
    def _confluence(self, request: web.Request, path: str) -> web.StreamResponse:
        parts = path.strip("/").split("/")
        if path == "/rest/api/content":
            start, limit = int(request.query["start"]), int(request.query["limit"])
            ids = sorted(self.confluence)
            page = [
                {"id": i, "title": self.confluence[i].title, "type": "page",
                 "version": {"number": self.confluence[i].version}}
                for i in ids[start : start + limit]
            ]  # fmt: skip
            links = {"next": "more"} if start + limit < len(ids) else {}
            return web.json_response({"results": page, "size": len(page), "_links": links})
        if parts[:3] == ["rest", "api", "content"] and len(parts) == 4:
            doc = self.confluence.get(parts[3])
            if doc is None:
                return web.json_response({"message": "gone"}, status=404)
            body = {"storage": {"value": doc.body, "representation": "storage"}}
            return web.json_response({"id": parts[3], "title": doc.title, "body": body})
        if parts[-2:] == ["child", "attachment"]:
            found = [
                {"id": a, "title": d.title, "version": {"number": d.version},
                 "_links": {"download": f"/download/attachments/{p}/{d.title}?version={d.version}"}}
                for a, (p, d) in sorted(self.attachments.items()) if p == parts[3]
            ]  # fmt: skip
            return web.json_response({"results": found, "_links": {}})
        if parts[0] == "download":
            for _, doc in self.attachments.values():
                if doc.title == parts[-1]:
                    raw = doc.raw or doc.body.encode()
                    return web.Response(body=raw, content_type="text/plain")
        return web.json_response({"message": "not found"}, status=404)

    # -- Notion ---------------------------------------------------------------
    async def _notion(self, request: web.Request, path: str) -> web.StreamResponse:
        parts = path.strip("/").split("/")
        if parts[:2] == ["v1", "databases"] and len(parts) == 3:
            if parts[2] != "db1":
                return web.json_response({"object": "error", "status": 404}, status=404)
            return web.json_response({"object": "database", "id": "db1"})
        if parts[:2] == ["v1", "databases"] and parts[3:] == ["query"]:
            pages = [self._notion_page(i, d) for i, d in sorted(self.notion_db.items())]
            return web.json_response({"results": pages, "has_more": False, "next_cursor": None})
        if parts[:2] == ["v1", "pages"]:
            doc = self.notion_pages.get(parts[2])
            if doc is None:
                return web.json_response({"object": "error", "status": 404}, status=404)
            return web.json_response(self._notion_page(parts[2], doc))
        if parts[:2] == ["v1", "blocks"]:
            page_id = parts[2]
            doc = self.notion_db.get(page_id) or self.notion_pages.get(page_id)
            if doc is None:
                return web.json_response({"object": "error", "status": 404}, status=404)
            blocks: list[dict[str, Any]] = []
            for n, para in enumerate(doc.body.split("\n\n")):
                kind = "heading_2" if para.startswith("## ") else "paragraph"
                text = para.removeprefix("## ")
                blocks.append({"id": f"{page_id}-b{n}", "type": kind,
                               kind: {"rich_text": [{"plain_text": text}]}})  # fmt: skip
            for child, sub in sorted(self.notion_pages.items()):
                if sub.parent == page_id:
                    blocks.append({"id": child, "type": "child_page",
                                   "child_page": {"title": sub.title}})  # fmt: skip
            return web.json_response({"results": blocks, "has_more": False, "next_cursor": None})
        return web.json_response({"object": "error", "status": 404}, status=404)

    def _notion_page(self, page_id: str, doc: Doc) -> dict[str, Any]:
        return {
            "object": "page", "id": page_id, "url": f"https://www.notion.so/{page_id}",
            "last_edited_time": f"2026-11-{doc.version:02d}T00:00:00.000Z",
            "properties": {"Name": {"type": "title", "title": [{"plain_text": doc.title}]}},
        }  # fmt: skip

    # -- Drive ----------------------------------------------------------------
    def _drive(self, request: web.Request, path: str) -> web.StreamResponse:
        parts = path.strip("/").split("/")
        if path == "/drive/v3/files":
            folder = request.query["q"].split("'")[1]
            files = [
                {"id": i, "name": d.title, "mimeType": d.kind,
                 "modifiedTime": f"2026-11-{d.version:02d}T00:00:00Z",
                 "webViewLink": f"https://drive.google.com/file/d/{i}/view"}
                for i, d in sorted(self.drive.items()) if d.parent == folder
            ]  # fmt: skip
            return web.json_response({"files": files})
        if parts[:3] == ["drive", "v3", "files"] and len(parts) >= 4:
            doc = self.drive.get(parts[3])
            if doc is None:
                return web.json_response({"error": {"code": 404}}, status=404)
            if parts[4:] == ["export"]:
                mime = request.query["mimeType"]
                return web.Response(body=doc.raw or doc.body.encode(), content_type=mime)
            return web.Response(body=doc.raw or doc.body.encode(), content_type=doc.kind)
        return web.json_response({"error": {"code": 404}}, status=404)
