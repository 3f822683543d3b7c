"""The long-running commands, ``teamrag slack``, ``discord`` and ``serve``: each checks its
settings and binds its ports first (a mistake is said at once), then keeps its chat
services, and the sources' scheduled sync, open until it is stopped."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Annotated

import typer

from bots.common import (
    BoundPorts,
    export_tracing,
    fail,
    knowledge_base,
    listening_socket,
    on_sigterm,
    run_async,
    settings_or_exit,
    startup_objects_frozen,
    warn_if_empty,
)

if TYPE_CHECKING:  # imported when a command runs (bots/cli.py)
    from adapters.chat.channels import ChannelRules
    from adapters.chat.services import ChatServices
    from agent.retrieval.knowledge_base import KnowledgeBase
    from bots.settings import Settings


async def _with_chat_services(
    settings: Settings,
    rules: ChannelRules,
    use: Callable[[ChatServices, KnowledgeBase], Awaitable[None]],
) -> None:
    from bots.logs import logging_configured

    # A bot runs for days: what it did (connected, refused, retried) belongs in its log.
    with logging_configured(settings):
        await _serve_chat(settings, rules, use)


async def _serve_chat(
    settings: Settings,
    rules: ChannelRules,
    use: Callable[[ChatServices, KnowledgeBase], Awaitable[None]],
) -> None:
    from agent.coordination.redis_connection import RedisUnavailableError
    from agent.memory.backends import MemoryBackendError
    from bots.settings import BotConfigError
    from bots.sources_wiring import running_sources
    from bots.wiring import open_chat_services

    export_tracing(settings)
    # asyncio's default pool has cpu+4 threads: with a Chroma server or Redis each search
    # and cache lookup waits on the network inside one, and fifty answers queue behind six.
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(settings.worker_threads, thread_name_prefix="teamrag")
    )
    with knowledge_base(settings) as kb:
        warn_if_empty(settings, kb)
        try:
            async with open_chat_services(settings, kb, rules) as services:
                main = asyncio.current_task()
                assert main is not None

                def stop() -> None:
                    main.cancel()

                # SIGTERM (docker stop) ends a bot like Ctrl-C; the Slack bot replaces this
                # with its own gentler stop that finishes the answers under way.
                with startup_objects_frozen(), on_sigterm(stop):
                    # Sources sync on their schedule in every long-running process:
                    # the bots and the HTTP service alike.
                    async with running_sources(settings, kb, services.redis):
                        await use(services, kb)
        except (MemoryBackendError, BotConfigError, RedisUnavailableError) as exc:
            raise fail(str(exc)) from None


def _serve_bot(
    check: Callable[[Settings], None],
    serve: Callable[[Settings, ChatServices, BoundPorts], Awaitable[None]],
    *,
    events_port: Callable[[Settings], int | None] = lambda settings: None,
) -> None:
    """Check the bot's settings and bind its ports before opening anything (a bad setting
    or a taken port is said at once), then run it until stopped."""
    from adapters.chat.channels import ChannelRulesError, load_channel_rules
    from bots.settings import BotConfigError

    settings = settings_or_exit()
    try:
        check(settings)
        rules = load_channel_rules(
            settings.channels_file, settings.channels, default_scope=settings.default_scope
        )
    except (BotConfigError, ChannelRulesError) as exc:
        raise fail(str(exc), 2) from None
    ports = BoundPorts.bind(settings, events_port=events_port(settings))
    try:
        run_async(
            _with_chat_services(
                settings, rules, lambda services, _kb: serve(settings, services, ports)
            )
        )
    finally:
        ports.close()


def slack(
    port: Annotated[
        int | None, typer.Option(help="HTTP Events API port (default TEAMRAG_SLACK_PORT).")
    ] = None,
) -> None:
    """The Slack bot: Socket Mode when SLACK_APP_TOKEN is set, else the HTTP Events API."""
    from bots.slack_bot import check_slack_settings, serve_slack

    def events_port(settings: Settings) -> int | None:
        return None if settings.slack_app_token else port or settings.slack_port  # Socket Mode

    def serve(settings: Settings, services: ChatServices, ports: BoundPorts) -> Awaitable[None]:
        return serve_slack(settings, services, port=port or settings.slack_port, ports=ports)

    _serve_bot(check_slack_settings, serve, events_port=events_port)


def discord() -> None:
    """The Discord bot: /ask, mentions and thread follow-ups (DISCORD_TOKEN)."""
    from bots.discord_bot import check_discord_settings, serve_discord

    def serve(settings: Settings, services: ChatServices, ports: BoundPorts) -> Awaitable[None]:
        return serve_discord(settings, services, ports=ports)

    _serve_bot(check_discord_settings, serve)


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int | None, typer.Option(help="Port (default TEAMRAG_HTTP_PORT).")] = None,
) -> None:
    """The HTTP service: chat API, accounts, /v1 (OpenAI-compatible) and the web chat.

    /api/chat, accounts and conversations, /v1 for OpenAI clients, the web chat at / and
    /admin, OpenAPI docs at /docs."""
    from bots.serve import serve_http

    settings = settings_or_exit()
    # Bound before the knowledge base loads: a taken port is said at once, with the fix.
    listening = listening_socket(host, port or settings.http_port, "TEAMRAG_HTTP_PORT")
    try:
        ports = BoundPorts.bind(settings)  # /readyz and /metrics: TEAMRAG_OPS_PORT only
    except typer.Exit:
        listening.close()
        raise

    def run(services: ChatServices, kb: KnowledgeBase) -> Awaitable[None]:
        return serve_http(settings, services, kb, listening, ops=ports.ops)

    from adapters.chat.channels import ChannelRules

    try:
        run_async(_with_chat_services(settings, ChannelRules(), run))
    finally:
        ports.close()
