"""``teamrag serve``: the HTTP service (FastAPI on uvicorn) on the configured agent.

It opens the same chat services as the bots (:func:`bots.wiring.open_chat_services`):
the same knowledge base, answer cache, thread locks, rate limit, usage and feedback
records, shared through Redis when ``REDIS_URL`` is set. Its own tables (accounts,
conversations) live in SQLite in the data folder, or in Postgres with ``DATABASE_URL``.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import uvicorn
from fastapi import FastAPI

from adapters.chat.metrics import Metrics
from adapters.chat.services import ChatServices
from adapters.http.accounts import AccountStore
from adapters.http.api_admin import document_row
from adapters.http.app import create_app
from adapters.http.context import HttpContext
from adapters.http.conversations import ConversationStore
from adapters.http.db import Database
from adapters.http.passwords import PasswordChecks
from adapters.http.signin_limit import LocalSignInLimiter, SignInLimiter, SignInPolicy
from adapters.http.signin_limit_redis import RedisSignInLimiter
from adapters.http.tokens import Tokens, load_or_create_secret
from adapters.http.turns import HttpTurns
from agent.coordination.redis_connection import RedisConnection
from agent.retrieval.knowledge_base import KnowledgeBase
from bots.checks import readiness
from bots.common import on_sigterm
from bots.ops import ops_server
from bots.settings import Settings

log = logging.getLogger(__name__)


def open_database(settings: Settings) -> Database:
    return Database.open(settings.database_url, settings.data_dir)


def tokens(settings: Settings) -> Tokens:
    secret = load_or_create_secret(settings.jwt_secret, settings.data_dir / "jwt_secret")
    return Tokens(secret, settings.token_days)


def signin_limiter(settings: Settings, redis: RedisConnection | None) -> SignInLimiter:
    policy = SignInPolicy(
        per_account=settings.signin_failures_per_account,
        per_address=settings.signin_failures_per_address,
        lockout_s=settings.signin_lockout_s,
        max_lockout_s=settings.signin_max_lockout_s,
        window_s=settings.signin_window_s,
    )
    return LocalSignInLimiter(policy) if redis is None else RedisSignInLimiter(redis, policy)


@asynccontextmanager
async def open_http_app(
    settings: Settings, services: ChatServices, kb: KnowledgeBase
) -> AsyncIterator[FastAPI]:
    """The application on ``services``; at the end, the turns under way finish and are
    stored before the database closes."""
    db = open_database(settings)
    passwords = PasswordChecks(settings.signin_threads)
    try:
        ctx = HttpContext(
            services=services,
            accounts=AccountStore(db),
            conversations=ConversationStore(db),
            tokens=tokens(settings),
            max_input_chars=settings.max_input_chars,
            max_body_bytes=settings.http_max_body_bytes,
            max_history_chars=settings.http_max_history_chars,
            default_scope=settings.default_scope,
            documents=lambda: [document_row(d) for d in kb.catalog.documents()],
            signin_limiter=signin_limiter(settings, services.redis),
            passwords=passwords,
        )
        app = create_app(ctx)
        try:
            yield app
        finally:
            turns: HttpTurns = app.state.turns
            await turns.drain()
    finally:
        passwords.close()
        db.close()


async def serve_http(
    settings: Settings,
    services: ChatServices,
    kb: KnowledgeBase,
    listening: socket.socket,
    ops: socket.socket | None = None,
) -> None:
    """Serve on ``listening`` (bound by the caller, which says what to do when the port is
    taken) until SIGTERM; /readyz and /metrics on ``ops`` (TEAMRAG_OPS_PORT) only, since
    /readyz names the data folder and the back-ends."""
    checks = readiness(settings, redis=services.redis)
    metrics = services.metrics or Metrics()
    try:
        async with (
            ops_server(settings.ops_port, checks, metrics, listening=ops),
            open_http_app(settings, services, kb) as app,
        ):
            await _run_uvicorn(settings, app, listening)
    finally:
        await checks.aclose()


async def _run_uvicorn(settings: Settings, app: FastAPI, listening: socket.socket) -> None:
    host, port = listening.getsockname()[:2]
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=settings.log_level.lower(),
        # Our own logging is configured already; uvicorn's would replace it.
        log_config=None,
        timeout_graceful_shutdown=30,
    )
    server = uvicorn.Server(config)

    def finish() -> None:
        # SIGTERM: stop taking requests and let the answers under way finish, instead of
        # the CLI's default of cancelling everything (uvicorn's own handler sees the
        # signal too, but the event loop's handler would cancel first).
        server.should_exit = True

    log.info("teamrag serve on http://%s:%s (docs at /docs, web chat at /)", host, port)
    with on_sigterm(finish):
        await server.serve(sockets=[listening])
