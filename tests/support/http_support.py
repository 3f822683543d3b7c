"""The real HTTP service for tests: the bots' chat services, the service's own stores,
served by uvicorn on a free port, and httpx clients signed in as test accounts."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from adapters.http.context import HttpContext
from agent.retrieval.knowledge_base import KnowledgeBase
from bots.serve import open_http_app
from bots.settings import Settings
from bots.wiring import open_chat_services
from tests.fakes.openai_server import FakeOpenAI


def http_settings(folder: Path, *, llm: FakeOpenAI | None = None, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": folder / "data",
        "jwt_secret": "test-secret-" + "x" * 32,
        "REDIS_URL": None,
        "DATABASE_URL": None,
        "OPENAI_API_KEY": None,
        "OPENAI_BASE_URL": None,
    }
    if llm is not None:
        values |= {
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_API_KEY": "test",
            "fast_model": "fast-model",
            "chat_model": "chat-model",
            "llm_max_retries": 0,
            "llm_timeout_s": 5.0,
        }
    return Settings(_env_file=None, **(values | overrides))


@dataclass
class Service:
    url: str
    app: FastAPI

    @property
    def ctx(self) -> HttpContext:
        ctx: HttpContext = self.app.state.ctx
        return ctx

    def add_user(self, name: str, **options: Any) -> str:
        """Add an account; returns a bearer token for it."""
        self.ctx.accounts.add(name, **options)
        return self.ctx.tokens.issue(name)

    def client(self, token: str | None = None, **options: Any) -> httpx.AsyncClient:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        options.setdefault("timeout", 30.0)
        return httpx.AsyncClient(base_url=self.url, headers=headers, **options)


def listening_socket() -> socket.socket:
    """Bound and listening before uvicorn starts: a client that connects early waits in
    the backlog instead of being refused, so nobody has to wait for a "started" flag."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


@asynccontextmanager
async def serve_app(app: FastAPI) -> AsyncIterator[str]:
    sock = listening_socket()
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_config=None, lifespan="off"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task
        sock.close()


@asynccontextmanager
async def http_service(kb: KnowledgeBase, settings: Settings) -> AsyncIterator[Service]:
    async with (
        open_chat_services(settings, kb) as services,
        open_http_app(settings, services, kb) as app,
        serve_app(app) as url,
    ):
        yield Service(url, app)


def parse_sse(text: str) -> list[tuple[str, Any]]:
    """(event, data) pairs of a Server-Sent Events body, in order."""
    events = []
    for block in text.strip().split("\n\n"):
        name, data = "message", []
        for line in block.splitlines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data:
            events.append((name, json.loads("\n".join(data))))
    return events
