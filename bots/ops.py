"""The operational endpoints: ``/healthz``, ``/readyz`` and ``/metrics``.

``/healthz`` answers while the event loop runs: an orchestrator restarts a worker
that stops answering it. ``/readyz`` answers 200 only while every configured
external part answers, 503 with the failing checks and their fixes otherwise: a
load balancer stops sending work meanwhile. ``/metrics`` is for Prometheus.

Every bot and ``teamrag serve`` start a small server for them (:func:`start_ops_server`,
on ``TEAMRAG_OPS_PORT``). A public port (the Slack Events API's, ``teamrag serve``'s)
keeps only ``/healthz`` (:func:`healthz_route`): ``/readyz`` names the data folder and
the back-ends, and ``/metrics`` the back-ends and the traffic.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from adapters.chat.metrics import Metrics
from bots.checks import Readiness

log = logging.getLogger(__name__)


async def _healthz(request: web.Request) -> web.Response:
    return web.Response(text="ok")


def healthz_route(app: web.Application) -> None:
    """Add ``/healthz`` alone to ``app`` (a public port: it says nothing but "ok")."""
    app.router.add_get("/healthz", _healthz)


def ops_routes(app: web.Application, checks: Readiness, metrics: Metrics) -> None:
    """Add the three endpoints to ``app`` (before it starts)."""

    async def readyz(request: web.Request) -> web.Response:
        results = await checks.results()
        ready = all(r.ok for r in results)
        body = {"ready": ready, "checks": [r.to_dict() for r in results]}
        return web.json_response(body, status=200 if ready else 503)

    async def metrics_view(request: web.Request) -> web.Response:
        body, content_type = metrics.exposition(request.headers.get("Accept", ""))
        return web.Response(body=body, headers={"Content-Type": content_type})

    healthz_route(app)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics_view)


def site_for(
    runner: web.AppRunner, host: str, port: int, listening: socket.socket | None
) -> web.BaseSite:
    """Where ``runner`` serves: the socket the CLI bound already, else ``host:port``."""
    if listening is not None:
        return web.SockSite(runner, listening)
    return web.TCPSite(runner, host, port)


async def start_ops_server(
    port: int,
    host: str,
    checks: Readiness,
    metrics: Metrics,
    *,
    listening: socket.socket | None = None,
) -> web.AppRunner:
    """Serve the endpoints on ``host:port`` (0: any free port; see ``runner.addresses``),
    or on ``listening`` when the caller bound it already. Stop it with
    ``await runner.cleanup()``."""
    app = web.Application()
    ops_routes(app, checks, metrics)
    runner = web.AppRunner(app, access_log=None)  # probes every few seconds are not news
    await runner.setup()
    try:
        await site_for(runner, host, port, listening).start()
    except OSError as exc:
        await runner.cleanup()
        raise OSError(
            f"cannot serve /healthz, /readyz and /metrics on {host}:{port}: {exc.strerror}; "
            "set TEAMRAG_OPS_PORT to a free port, or 0 to turn them off"
        ) from exc
    log.info("ops endpoints on http://%s:%s (/healthz /readyz /metrics)", host, port)
    return runner


@asynccontextmanager
async def ops_server(
    port: int,
    checks: Readiness,
    metrics: Metrics,
    *,
    host: str = "0.0.0.0",
    listening: socket.socket | None = None,
) -> AsyncIterator[web.AppRunner | None]:
    """:func:`start_ops_server` for the block, or nothing when ``port`` is 0 (off)."""
    if port == 0:
        yield None
        return
    runner = await start_ops_server(port, host, checks, metrics, listening=listening)
    try:
        yield runner
    finally:
        await runner.cleanup()
