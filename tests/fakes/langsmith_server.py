"""A small LangSmith API for tests, over real HTTP: what the tracing client posts.

The ``langsmith`` client (0.15) asks ``GET /info`` once, then sends runs in batches
to ``POST /runs/multipart``: one form part ``post.{id}`` or ``patch.{id}`` per run
operation, plus parts ``{op}.{id}.inputs`` / ``.outputs`` / ``.extra`` (metadata) /
``.events`` for its bulky fields. A server that does not offer multipart gets
``POST /runs/batch`` (JSON ``{"post": [...], "patch": [...]}``), and with batching
off ``POST /runs`` and ``PATCH /runs/{id}``; all are accepted. ``/info`` advertises
no zstd compression, so the client sends plain multipart.

Each run is kept merged by id (a patch completes its post), as LangSmith shows it.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from aiohttp import BodyPartReader, web

from tests.fakes.background import BackgroundApp

# The client reads every batch setting once one is given (a partial config kills its
# sender thread with a KeyError), so all of them, at LangSmith's defaults.
_INFO = {
    "version": "0.10.0",
    "instance_flags": {"zstd_compression_enabled": False},
    "batch_ingest_config": {
        "use_multipart_endpoint": True,
        "size_limit": 100,
        "size_limit_bytes": 20_971_520,
        "scale_up_nthreads_limit": 16,
        "scale_up_qsize_trigger": 1000,
        "scale_down_nempty_trigger": 4,
    },
}


@dataclass
class FakeLangSmith:
    """Start with :meth:`start`; ``url`` is then ``http://127.0.0.1:PORT``."""

    url: str = ""
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    api_keys: set[str] = field(default_factory=set)  # the x-api-key headers seen
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _server: BackgroundApp | None = None

    def start(self) -> FakeLangSmith:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/info", self._info)
        app.router.add_post("/runs/multipart", self._multipart)
        app.router.add_post("/runs/batch", self._batch)
        app.router.add_post("/runs", self._create)
        app.router.add_patch("/runs/{run_id}", self._update)
        self._server = BackgroundApp(app)
        self.url = self._server.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()

    def named(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(run) for run in self.runs.values() if run.get("name") == name]

    # --- recording ---------------------------------------------------------------------

    def _merge(self, run_id: str, fields: dict[str, Any]) -> None:
        with self._lock:
            self.runs.setdefault(run_id, {"id": run_id}).update(fields)

    def _seen(self, request: web.Request) -> None:
        key = request.headers.get("x-api-key")
        if key:
            with self._lock:
                self.api_keys.add(key)

    # --- handlers ----------------------------------------------------------------------

    async def _info(self, request: web.Request) -> web.Response:
        return web.json_response(_INFO)

    async def _multipart(self, request: web.Request) -> web.Response:
        self._seen(request)
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader):
                return web.json_response({"error": "nested multipart"}, status=422)
            name = part.name or ""
            value = json.loads(await part.read())
            op, _, rest = name.partition(".")
            if op not in ("post", "patch") or not rest:
                return web.json_response({"error": f"unexpected part {name!r}"}, status=422)
            run_id, _, extra = rest.partition(".")
            self._merge(run_id, {extra: value} if extra else value)
        return web.json_response({}, status=202)

    async def _batch(self, request: web.Request) -> web.Response:
        self._seen(request)
        body = await request.json()
        for run in [*body.get("post", []), *body.get("patch", [])]:
            self._merge(str(run["id"]), run)
        return web.json_response({}, status=202)

    async def _create(self, request: web.Request) -> web.Response:
        self._seen(request)
        run = await request.json()
        self._merge(str(run["id"]), run)
        return web.json_response({}, status=202)

    async def _update(self, request: web.Request) -> web.Response:
        self._seen(request)
        self._merge(request.match_info["run_id"], await request.json())
        return web.json_response({}, status=202)
