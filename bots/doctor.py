"""``teamrag doctor``: is this deployment set up right, and if not, what to do about it.

It checks the configuration (settings, channel rules, the bots' tokens), the data
folder (writable, something ingested) and every connection (the readiness checks
of bots/checks.py, plus Slack's ``auth.test`` and Discord's ``/users/@me`` when
their tokens are set), then prints one table: each part, whether it runs embedded
or external and where, ok or the problem, and the fix. Exit status 0 when all is
well, 1 otherwise, so a deployment script can gate on it.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from agent.plumbing.urls import redact_url
from bots.checks import CheckFailed, CheckResult, Part, external_parts, run_parts

if TYPE_CHECKING:  # imported when the command runs (bots/cli.py)
    from bots.settings import Settings

DISCORD_API = "https://discord.com/api/v10"
SLACK_API = "https://slack.com/api/"
SLACK_TOKEN_FIX = (
    "set SLACK_BOT_TOKEN to the Bot User OAuth Token (xoxb-...) from your Slack app's "
    "OAuth & Permissions page, and reinstall the app if it was removed"
)
SLACK_APP_TOKEN_FIX = (
    "set SLACK_APP_TOKEN to an app-level token (xapp-...) with connections:write (Basic "
    "Information > App-Level Tokens), or unset it to serve the HTTP Events API instead"
)
SLACK_REACH_FIX = "check the network to Slack, or SLACK_API_URL if you set it"
DISCORD_TOKEN_FIX = (
    "set DISCORD_TOKEN to the bot token from the Discord Developer Portal (Bot > Reset Token)"
)
DISCORD_REACH_FIX = "check the network to Discord, or DISCORD_API_BASE if you set it"


def configuration(settings: Settings) -> list[CheckResult]:
    """What can be wrong before anything connects."""
    from adapters.chat.channels import ChannelRulesError, load_channel_rules

    results = []
    origin = "TEAMRAG_CHANNELS" if settings.channels else str(settings.channels_file or "none")
    try:
        rules = load_channel_rules(
            settings.channels_file, settings.channels, default_scope=settings.default_scope
        )
        detail = f"{len(rules.channels)} channels with their own rules"
        if origin == "none":
            detail = "answer in every channel, default scope"
        results.append(CheckResult("channel rules", False, origin, detail=detail))
    except ChannelRulesError as exc:
        fix = "correct the rules (see the channels section of docs/deployment.md)"
        results.append(CheckResult("channel rules", False, origin, problem=str(exc), fix=fix))
    if settings.slack_bot_token:
        from bots.slack_bot import check_slack_settings

        results.append(_bot_settings("Slack settings", check_slack_settings, settings))
    if settings.discord_token:
        from bots.discord_bot import check_discord_settings

        results.append(_bot_settings("Discord settings", check_discord_settings, settings))
    if settings.langsmith_tracing and not settings.langsmith_api_key:
        results.append(
            CheckResult(
                "LangSmith tracing",
                False,
                "LANGSMITH_TRACING",
                problem="tracing is on but LANGSMITH_API_KEY is not set",
                fix="set LANGSMITH_API_KEY, or unset LANGSMITH_TRACING",
            )
        )
    return results


def _bot_settings(name: str, check: Callable[[Settings], None], settings: Settings) -> CheckResult:
    from bots.settings import BotConfigError

    try:
        check(settings)
    except BotConfigError as exc:
        # The message names the variable and says what to set: it is its own fix.
        return CheckResult(name, False, "environment", problem=str(exc))
    return CheckResult(name, False, "environment")


def data_folder(settings: Settings) -> list[CheckResult]:
    folder = settings.data_dir
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-"):
            pass
    except OSError as exc:
        fix = (
            "set TEAMRAG_DATA_DIR to a folder this user can write to (in a container: a "
            "volume the app's user owns)"
        )
        problem = f"not writable: {exc.strerror or exc}"
        return [CheckResult("data folder", False, str(folder), problem=problem, fix=fix)]
    results = [
        CheckResult("data folder", False, str(folder), detail="writable"),
        CheckResult("stores", False, str(folder), detail=_stores(settings)),
    ]
    if settings.database_url:
        return [*results, _shared_catalog(settings)]
    catalog_file = folder / "catalog.sqlite3"
    empty_fix = "run `teamrag ingest PATH` with the team's documents"
    if not catalog_file.exists():
        problem = "empty: nothing has been ingested"
        return [*results, CheckResult("knowledge base", False, str(folder), problem, empty_fix)]
    from agent.retrieval.catalog import CatalogError
    from agent.retrieval.catalog_sqlite import SqliteCatalog

    try:
        catalog = SqliteCatalog(catalog_file)
        try:
            documents, chunks = len(catalog.documents()), catalog.chunk_count()
        finally:
            catalog.close()
    except (CatalogError, sqlite3.Error) as exc:
        fix = "move the file away and ingest the documents again"
        where = str(catalog_file)
        return [*results, CheckResult("knowledge base", False, where, str(exc), fix)]
    if chunks == 0:
        problem = "empty: no document has any text"
        return [*results, CheckResult("knowledge base", False, str(folder), problem, empty_fix)]
    detail = f"{documents} documents, {chunks} chunks"
    return [*results, CheckResult("knowledge base", False, str(folder), detail=detail)]


def ocr() -> CheckResult:
    """Whether scanned PDF pages can be read. Optional, so never a problem: without it
    their text pages still go in and the ingest report names the scanned ones."""
    from agent.retrieval.loaders.ocr import ocr_status

    available, said = ocr_status()
    detail = f"available: {said}" if available else f"off, scanned PDF pages are left out: {said}"
    return CheckResult("OCR (scanned PDFs)", False, "tesseract", detail=detail)


def private_sources(settings: Settings) -> list[CheckResult]:
    """The sources allowed to reach private and local addresses (`--allow-private`): an
    operator should know which ones bypass the address rule. Nothing without sources."""
    from bots.sources_wiring import has_sources, open_source_store

    if not has_sources(settings):
        return []
    try:
        store = open_source_store(settings)
    except Exception:  # an unreachable Postgres is reported by its own check
        return []
    try:
        allowed = [s.spec for s in store.all() if s.spec.allow_private]
    finally:
        store.close()
    detail = (
        "allowed for " + ", ".join(f"{s.name} ({s.kind} {s.target})" for s in allowed)
        if allowed
        else "every source reaches public addresses only"
    )
    return [CheckResult("private addresses", False, "sources (--allow-private)", detail=detail)]


def _stores(settings: Settings) -> str:
    """Which stores every host shares and which stay in this host's data folder."""
    shared: list[str] = []
    local: list[str] = []
    for name, on_server in (
        ("documents and keyword index (Postgres)", bool(settings.database_url)),
        ("sources and their sync state (Postgres)", bool(settings.database_url)),
        ("thread memory (Postgres)", bool(settings.database_url)),
        ("vectors (Chroma server)", bool(settings.chroma_url)),
        ("locks, caches, queue (Redis)", bool(settings.redis_url)),
    ):
        (shared if on_server else local).append(name.split(" (")[0])
    return f"shared: {', '.join(shared) or 'none'}; local: {', '.join(local) or 'none'}"


def _shared_catalog(settings: Settings) -> CheckResult:
    """The knowledge base in Postgres: what every host searches."""
    from agent.retrieval.catalog import CatalogError
    from agent.retrieval.catalog_postgres import PostgresCatalog

    assert settings.database_url is not None
    where = f"Postgres schema {settings.catalog_schema}"
    try:
        catalog = PostgresCatalog(settings.database_url, settings.catalog_schema)
    except CatalogError as exc:
        return CheckResult("knowledge base", True, where, str(exc), "see the Postgres check")
    try:
        documents, chunks = len(catalog.documents()), catalog.chunk_count()
    finally:
        catalog.close()
    if chunks == 0:
        fix = "run `teamrag ingest PATH` on any host with the team's documents"
        return CheckResult("knowledge base", True, where, "empty: nothing has been ingested", fix)
    return CheckResult(
        "knowledge base", True, where, detail=f"{documents} documents, {chunks} chunks"
    )


def platform_parts(settings: Settings, timeout_s: float) -> list[Part]:
    """Slack and Discord, checked with their tokens when those are set."""
    parts = []
    if settings.slack_bot_token:
        base = settings.slack_api_url or SLACK_API
        token, app_token = settings.slack_bot_token, settings.slack_app_token

        async def slack() -> str | None:
            from slack_sdk.errors import SlackApiError
            from slack_sdk.web.async_client import AsyncWebClient

            client = AsyncWebClient(
                token=token,
                base_url=base if base.endswith("/") else base + "/",
                timeout=max(1, round(timeout_s)),
            )
            try:
                await client.auth_test()
            except SlackApiError as exc:
                error = exc.response.get("error") if exc.response is not None else exc
                raise CheckFailed(f"auth.test failed: {error}", SLACK_TOKEN_FIX) from None
            if app_token:  # Socket Mode: the app-level token must open a connection too
                try:
                    await client.apps_connections_open(app_token=app_token)
                except SlackApiError as exc:
                    error = exc.response.get("error") if exc.response is not None else exc
                    problem = f"apps.connections.open failed: {error}"
                    raise CheckFailed(problem, SLACK_APP_TOKEN_FIX) from None
            return None

        parts.append(Part("Slack", redact_url(base), slack, SLACK_REACH_FIX))
    if settings.discord_token:
        api = (settings.discord_api_base or DISCORD_API).rstrip("/")
        headers = {"Authorization": f"Bot {settings.discord_token}"}

        async def discord() -> str | None:
            from bots.checks import http_get

            status, _ = await http_get(f"{api}/users/@me", headers=headers, timeout_s=timeout_s)
            if status == 401:
                raise CheckFailed("the token was refused (HTTP 401)", DISCORD_TOKEN_FIX)
            return None if status == 200 else f"GET /users/@me answered HTTP {status}"

        parts.append(Part("Discord", redact_url(api), discord, DISCORD_REACH_FIX))
    return parts


async def connections(settings: Settings, timeout_s: float) -> list[CheckResult]:
    parts, owned = external_parts(settings, timeout_s=timeout_s)
    try:
        return await run_parts([*parts, *platform_parts(settings, timeout_s)], timeout_s)
    finally:
        for redis in owned:
            await redis.aclose()


def render(console: Console, local: list[CheckResult], remote: list[CheckResult]) -> None:
    """The table of parts, then each problem with its fix (whole lines, easy to copy)."""
    from rich.table import Table

    table = Table(title="teamrag doctor")
    for column in ("part", "runs", "where", "status"):
        table.add_column(column, overflow="fold")
    rows = [(r, "") for r in local]
    rows += [(r, "external" if r.external else "embedded") for r in remote]
    for result, runs in rows:
        status = "[green]ok[/green]" if result.ok else "[red]problem[/red]"
        if result.ok and result.detail:
            status += f" ({result.detail})"
        table.add_row(result.part, runs, result.where, status)
    console.print(table)
    problems = [r for r in [*local, *remote] if not r.ok]
    for result in problems:
        console.print(f"[red]✗ {result.part}[/red]: {result.problem}", soft_wrap=True)
        if result.fix:
            console.print(f"  fix: {result.fix}", soft_wrap=True)
    if problems:
        console.print(f"[red]{len(problems)} problem(s)[/red]: apply the fixes, then run again.")
    else:
        console.print("[green]All good.[/green]")


def doctor(
    timeout: Annotated[
        float, typer.Option(min=0.1, max=60, help="Seconds each connection check may take.")
    ] = 5.0,
) -> None:
    """Check the configuration, the data folder and every connection; print the fixes."""
    from bots.settings import SettingsError, load_settings

    console = Console(highlight=False)
    try:
        settings = load_settings()
    except SettingsError as exc:
        fix = "correct or unset the variables named in the problem (environment or .env)"
        render(console, [CheckResult("settings", False, ".env and environment", str(exc), fix)], [])
        raise typer.Exit(1) from None
    local = configuration(settings) + data_folder(settings) + private_sources(settings) + [ocr()]
    remote = asyncio.run(connections(settings, timeout))
    render(console, local, remote)
    if not all(r.ok for r in [*local, *remote]):
        raise typer.Exit(1)
