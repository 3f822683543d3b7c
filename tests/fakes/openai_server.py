"""A small OpenAI-compatible server for tests, over real HTTP.

It answers ``/v1/embeddings`` with deterministic vectors (a hash of each
word, so texts that share words are similar), and can be told to fail.
The agent issue extends it with chat completions.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web

DIM = 64


def fake_vector(text: str) -> list[float]:
    vec = np.zeros(DIM, dtype=np.float32)
    for word in text.lower().split():
        digest = hashlib.md5(word.encode("utf-8")).digest()
        vec[digest[0] % DIM] += 1.0
    if not vec.any():
        vec[0] = 1.0
    return (vec / np.linalg.norm(vec)).tolist()


@dataclass
class FakeOpenAI:
    """Start with :meth:`start`; ``base_url`` is then ``http://127.0.0.1:PORT/v1``."""

    fail_with: int | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""
    _loop: asyncio.AbstractEventLoop | None = None
    _runner: web.AppRunner | None = None
    _thread: threading.Thread | None = None

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        if self.fail_with is not None:
            return web.json_response(
                {"error": {"message": "injected failure", "type": "server_error"}},
                status=self.fail_with,
            )
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": fake_vector(str(text))}
            for i, text in enumerate(inputs)
        ]
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "fake"),
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        )

    def start(self) -> FakeOpenAI:
        ready = threading.Event()

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            app = web.Application()
            app.router.add_post("/v1/embeddings", self._embeddings)
            self._runner = web.AppRunner(app)
            loop.run_until_complete(self._runner.setup())
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            loop.run_until_complete(site.start())
            port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            self.base_url = f"http://127.0.0.1:{port}/v1"
            ready.set()
            loop.run_forever()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def stop(self) -> None:
        if self._loop is None or self._runner is None:
            return
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
