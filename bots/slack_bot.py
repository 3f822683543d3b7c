"""``teamrag slack``: the Slack adapter on the configured agent.

Socket Mode when ``SLACK_APP_TOKEN`` is set: the bot opens a websocket to Slack, so
it needs no public URL (the easy start, one process). Otherwise the HTTP Events API
server on a port, which checks every request's signature with
``SLACK_SIGNING_SECRET``: the way to run several workers behind a load balancer.
``SLACK_API_URL`` points the Web API client elsewhere (the tests' fake Slack).
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

import aiohttp
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from adapters.chat.metrics import Metrics
from adapters.chat.services import ChatServices
from adapters.slack.app import create_app
from adapters.slack.dm import Conversations, SqliteDmConversations
from adapters.slack.dm_redis import RedisDmConversations
from adapters.slack.live import StreamSupport
from adapters.slack.queued import SlackBot
from adapters.slack.threads import SqliteThreadRecord, ThreadRecord
from adapters.slack.threads_redis import RedisThreadRecord
from adapters.slack.turns import PLATFORM
from agent.coordination.redis_connection import RedisConnection
from bots.checks import readiness
from bots.common import BoundPorts, err, on_sigterm
from bots.ops import healthz_route, ops_server, site_for
from bots.settings import BotConfigError, Settings

EVENTS_PATH = "/slack/events"
DOCS = "see docs/slack.md"
DRAIN_S = 30.0  # how long a stopping bot waits for the answers under way


def check_slack_settings(settings: Settings) -> None:
    """Fail before opening anything when a needed variable is missing."""
    token = settings.slack_bot_token
    if not token:
        raise BotConfigError(
            "SLACK_BOT_TOKEN is not set: copy the Bot User OAuth Token (xoxb-...) from your "
            f"Slack app's OAuth & Permissions page ({DOCS})"
        )
    if not token.startswith("xoxb-"):
        raise BotConfigError(
            "SLACK_BOT_TOKEN must be the Bot User OAuth Token, which starts with xoxb- "
            f"(not a user token xoxp- or an app-level token xapp-; {DOCS})"
        )
    if settings.slack_app_token:
        if not settings.slack_app_token.startswith("xapp-"):
            raise BotConfigError(
                "SLACK_APP_TOKEN must be an app-level token starting with xapp- with the "
                f"connections:write scope (Basic Information > App-Level Tokens; {DOCS})"
            )
    elif not settings.slack_signing_secret:
        raise BotConfigError(
            "SLACK_SIGNING_SECRET is not set: the HTTP Events API server needs it to check that "
            "requests come from Slack (Basic Information > App Credentials); or set "
            f"SLACK_APP_TOKEN to use Socket Mode instead ({DOCS})"
        )


def retry_handlers() -> list[AsyncRetryHandler]:
    """On a 429, wait the Retry-After Slack sent and try again (up to 3 times); retry a
    dropped connection once."""
    return [AsyncRateLimitErrorRetryHandler(max_retry_count=3), AsyncConnectionErrorRetryHandler()]


def slack_client(
    settings: Settings, session: aiohttp.ClientSession | None = None
) -> AsyncWebClient:
    """The Web API client. Give it a ``session``: without one, slack_sdk opens a new
    connection for every call, which under a burst of questions costs more than the call."""
    base_url = settings.slack_api_url or AsyncWebClient.BASE_URL
    return AsyncWebClient(
        token=settings.slack_bot_token,
        base_url=base_url if base_url.endswith("/") else base_url + "/",
        retry_handlers=retry_handlers(),
        session=session,
    )


def web_api_session() -> aiohttp.ClientSession:
    """One connection pool for every Web API call of the process. aiohttp's default of
    100 connections is reached by 50 answers starting at once (a status and a reply
    each), and the 101st call would wait for a free one."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1000))


def build_slack_app(
    settings: Settings,
    services: ChatServices,
    threads: ThreadRecord,
    *,
    session: aiohttp.ClientSession | None = None,
) -> tuple[AsyncApp, SlackBot]:
    client = slack_client(settings, session)
    bot = SlackBot(
        services,
        threads,
        client,
        queue=services.queue_for(PLATFORM),
        streaming=StreamSupport(enabled=settings.slack_streaming),
        retry_handlers=retry_handlers(),
        dm=dm_conversations(settings, services.redis),
    )
    secret = None if settings.slack_app_token else settings.slack_signing_secret
    return create_app(bot, client, signing_secret=secret), bot


def dm_conversations(settings: Settings, redis: RedisConnection | None) -> Conversations:
    """Which conversation a DM message continues: in Redis when there is one (the next
    message may reach a worker on another host), else the machine's SQLite file."""
    local = SqliteDmConversations(
        settings.data_dir / "slack_dm.sqlite", continue_s=settings.dm_continue_s
    )
    if redis is None:
        return local
    return RedisDmConversations(redis, local, continue_s=settings.dm_continue_s)


def thread_record(settings: Settings) -> SqliteThreadRecord:
    return SqliteThreadRecord(settings.data_dir / "slack_threads.sqlite")


def shared_threads(local: SqliteThreadRecord, redis: RedisConnection | None) -> ThreadRecord:
    """The threads the bot answers in, known to every worker through Redis; the
    machine's own record (``local``) while Redis is away."""
    return local if redis is None else RedisThreadRecord(redis, local)


async def start_http(
    app: AsyncApp,
    *,
    host: str,
    port: int,
    mount: Callable[[web.Application], None] | None = None,
    listening: socket.socket | None = None,
) -> tuple[web.AppRunner, int]:
    """Serve the Events API (events, commands and clicks on one path), and whatever
    ``mount`` adds (``/healthz``), on ``host:port`` or on ``listening`` when the
    caller bound it already; returns the port."""
    web_app = app.web_app(path=EVENTS_PATH, port=port)
    if mount is not None:
        mount(web_app)
    # No access log: a line per Slack event says nothing the bot's own log does not.
    runner = web.AppRunner(web_app, access_log=None)
    await runner.setup()
    await site_for(runner, host, port, listening).start()
    return runner, int(runner.addresses[0][1])


async def serve_slack(
    settings: Settings,
    services: ChatServices,
    *,
    port: int,
    host: str = "0.0.0.0",
    ports: BoundPorts | None = None,
) -> None:
    """Run the bot until Ctrl-C (cancelled) or SIGTERM (returns), then let the answers
    under way finish. ``ports`` are the sockets the CLI bound already (else ``port`` and
    ``TEAMRAG_OPS_PORT`` are bound here)."""
    ports = ports or BoundPorts()
    local_threads = thread_record(settings)
    threads = shared_threads(local_threads, services.redis)
    checks = readiness(settings, redis=services.redis)
    metrics = services.metrics or Metrics()
    stop = asyncio.Event()
    with on_sigterm(stop.set):
        try:
            async with web_api_session() as session:
                app, bot = build_slack_app(settings, services, threads, session=session)
                # Leaving serving() finishes the answers under way (up to the drain time).
                async with (
                    bot.serving(),
                    ops_server(settings.ops_port, checks, metrics, listening=ports.ops),
                ):
                    if settings.slack_app_token:
                        await _socket_mode(app, bot, settings.slack_app_token, stop)
                    else:
                        # Load balancers probe the Events API port itself; /readyz and
                        # /metrics name the data folder and back-ends: the ops port only.
                        await _http(
                            app,
                            bot,
                            stop,
                            host=host,
                            port=port,
                            mount=healthz_route,
                            sock=ports.events,
                        )
        finally:
            await checks.aclose()
            local_threads.close()


async def _socket_mode(app: AsyncApp, bot: SlackBot, app_token: str, stop: asyncio.Event) -> None:
    handler = AsyncSocketModeHandler(app, app_token)
    await handler.connect_async()  # type: ignore[no-untyped-call]
    err.print(
        "Slack bot connected over Socket Mode. Ctrl-C stops it.", highlight=False, soft_wrap=True
    )
    try:
        await stop.wait()
    finally:
        await handler.close_async()  # type: ignore[no-untyped-call]
        await bot.drain(DRAIN_S)


async def _http(
    app: AsyncApp,
    bot: SlackBot,
    stop: asyncio.Event,
    *,
    host: str,
    port: int,
    mount: Callable[[web.Application], None],
    sock: socket.socket | None,
) -> None:
    runner, bound = await start_http(app, host=host, port=port, mount=mount, listening=sock)
    err.print(
        f"Slack bot listening on http://{host}:{bound}{EVENTS_PATH} "
        "(events, /ask and buttons). Ctrl-C stops it.",
        highlight=False,
        soft_wrap=True,
    )
    try:
        await stop.wait()
    finally:
        # Stop taking requests, then let the answers under way finish.
        for site in list(runner.sites):
            await site.stop()
        await bot.drain(DRAIN_S)
        await runner.cleanup()
