"""Serve an aiohttp app from its own thread and event loop, for the fake servers.

Tests drive real clients (sync or async, on any loop) against these servers, so
each fake runs on a loop of its own that the test's loop never blocks.
"""

from __future__ import annotations

import asyncio
import threading

from aiohttp import web


class BackgroundApp:
    def __init__(self, app: web.Application, *, handler_cancellation: bool = False) -> None:
        self._app = app
        self._handler_cancellation = handler_cancellation
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        """Start serving; returns ``http://127.0.0.1:PORT``."""
        ready = threading.Event()
        address: list[str] = []

        def serve() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            # A client that gives up (timeout tests) may cancel its slow handler, so stop()
            # does not wait for it.
            runner = web.AppRunner(self._app, handler_cancellation=self._handler_cancellation)
            self._runner = runner
            loop.run_until_complete(runner.setup())
            site = web.TCPSite(runner, "127.0.0.1", 0)
            loop.run_until_complete(site.start())
            port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            address.append(f"http://127.0.0.1:{port}")
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=serve, daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the fake server did not start within 10 s")
        return address[0]

    def stop(self) -> None:
        if self._loop is None or self._runner is None:
            return
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
