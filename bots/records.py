"""``teamrag usage`` and ``teamrag feedback``: the records a team reads afterwards.

Both read the shared records in Redis when ``REDIS_URL`` is set (what every worker
wrote), else the SQLite files in the data folder. An unreachable Redis is an error
here, not a fallback: a report of one machine's outage records would look complete
and be wrong.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import sqlite3
from collections.abc import Callable, Coroutine
from dataclasses import asdict
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer
from rich.console import Console

from bots.common import fail, settings_or_exit

if TYPE_CHECKING:  # imported when a command runs (bots/cli.py)
    from adapters.chat.feedback import FeedbackEntry, Rating
    from adapters.chat.usage import AskedQuestion, UsageRow
    from agent.coordination.redis_connection import RedisConnection
    from bots.settings import Settings

out = Console()
T = TypeVar("T")


def _with_redis(
    url: str, retry_s: float, use: Callable[[RedisConnection], Coroutine[Any, Any, T]]
) -> T:
    """``use`` with a connection to Redis at ``url``, checked first: an unreachable Redis ends the
    command with one line naming the URL and the fix."""
    from agent.coordination.redis_connection import RedisConnection, RedisUnavailableError

    async def run() -> T:
        redis = RedisConnection(url, retry_s=retry_s)
        try:
            try:
                await redis.check()
            except RedisUnavailableError as exc:
                raise fail(str(exc)) from None
            return await use(redis)
        finally:
            await redis.aclose()

    return asyncio.run(run())


def _unreadable(settings: Settings, exc: Exception) -> typer.Exit:
    return fail(
        f"cannot read the records in {settings.data_dir}: {exc}; "
        "set TEAMRAG_DATA_DIR to the bots' data folder"
    )


def _reading(
    settings: Settings, use: Callable[[RedisConnection | None], Coroutine[Any, Any, T]]
) -> T:
    """``use`` on the shared records when ``REDIS_URL`` is set, else on the local files."""
    try:
        if settings.redis_url:
            return _with_redis(settings.redis_url, settings.redis_retry_s, use)
        return asyncio.run(use(None))
    except (OSError, sqlite3.Error) as exc:
        raise _unreadable(settings, exc) from None


def feedback(
    show: Annotated[str, typer.Option(help="down, up or all.")] = "down",
    limit: Annotated[int, typer.Option(min=1, max=10_000)] = 20,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
) -> None:
    """Votes on answers from Slack and Discord, newest first (thumbs-down by default)."""
    if show not in ("down", "up", "all"):
        raise fail(f"--show must be down, up or all, not {show!r}", 2)
    from adapters import console as view
    from bots.shared_state import shared_feedback_store

    rating = None if show == "all" else cast("Rating", show)
    settings = settings_or_exit()

    def read(redis: RedisConnection | None) -> list[FeedbackEntry]:
        store = shared_feedback_store(settings, redis)
        try:
            return store.entries(rating, limit)
        finally:
            store.close()

    async def read_shared(redis: RedisConnection | None) -> list[FeedbackEntry]:
        return read(redis)

    if settings.redis_url:
        entries = _reading(settings, read_shared)
    else:  # a file needs no event loop (so this also runs inside one, as tests do)
        try:
            entries = read(None)
        except (OSError, sqlite3.Error) as exc:
            raise _unreadable(settings, exc) from None
    if json_out:
        for entry in entries:
            print(view.feedback_json(entry))
    else:
        view.render_feedback(out, entries)


_USER_KEYS = (
    "a user key is platform:workspace:user: slack:T0123:U0456 for Slack, "
    "discord:GUILD_ID:USER_ID for Discord, http:http:NAME for an account of teamrag serve "
    "(teamrag users list); `teamrag usage --json` lists the keys in use"
)


def _user_key(value: str | None) -> str | None:
    """Records are kept under full keys; a bare name ("minji") matched nothing, silently."""
    if value is not None and len(value.split(":")) < 3:
        raise typer.BadParameter(f"{value!r}: {_USER_KEYS}")
    return value


def usage(
    days: Annotated[
        int,
        typer.Option(min=1, max=400, help="The last DAYS days (TEAMRAG_TIMEZONE), today included."),
    ] = 7,
    user: Annotated[
        str | None,
        typer.Option(help="Only this user key (platform:workspace:user).", callback=_user_key),
    ] = None,
    questions: Annotated[
        str | None,
        typer.Option(
            help="List this user's last questions instead (a user key).",
            metavar="KEY",
            callback=_user_key,
        ),
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON lines.")] = False,
) -> None:
    """Requests and tokens per day, user and model; or a user's last questions."""
    from adapters.chat.usage import UsageRow
    from bots.shared_state import usage_store

    settings = settings_or_exit()

    async def read(redis: RedisConnection | None) -> list[UsageRow] | list[AskedQuestion]:
        store = usage_store(settings, redis)
        try:
            if questions is not None:
                return await store.recent(questions)
            return await store.report(days, user)
        finally:
            store.close()

    found = _reading(settings, read)
    if json_out:
        for item in found:
            data = asdict(item)
            if isinstance(item, UsageRow):
                data["total_tokens"] = item.total_tokens
            print(json.dumps(data, ensure_ascii=False))
    elif questions is not None:
        _render_questions(questions, cast("list[AskedQuestion]", found), settings)
    else:
        _render_usage(days, cast("list[UsageRow]", found), settings.timezone)


def _render_usage(days: int, rows: list[UsageRow], zone_name: str) -> None:
    from rich.table import Table
    from rich.text import Text

    if not rows:
        out.print(
            f"No usage recorded in the last {days} days. / "
            f"최근 {days}일 동안 기록된 사용량이 없습니다."
        )
        return
    table = Table(title=f"Usage, last {days} days ({zone_name})")
    table.add_column("day")
    table.add_column("user", overflow="fold")  # the key is what --user and --questions take
    table.add_column("model")
    for name in ("requests", "prompt tokens", "completion tokens", "total tokens"):
        table.add_column(name, justify="right")
    for r in rows:
        table.add_row(
            r.day,
            Text(r.user),
            Text(r.model),
            f"{r.requests:,}",
            f"{r.prompt_tokens:,}",
            f"{r.completion_tokens:,}",
            f"{r.total_tokens:,}",
        )
    prompt = sum(r.prompt_tokens for r in rows)
    completion = sum(r.completion_tokens for r in rows)
    table.add_section()
    table.add_row(
        "total",
        f"{len({r.user for r in rows})} users",
        "",
        f"{sum(r.requests for r in rows):,}",
        f"{prompt:,}",
        f"{completion:,}",
        f"{prompt + completion:,}",
    )
    out.print(table)
    out.print(
        "One request per turn, under the model that wrote most of it; "
        "the other models it used show tokens with 0 requests.",
        style="dim",
    )


def _render_questions(user: str, asked: list[AskedQuestion], settings: Settings) -> None:
    from rich.table import Table
    from rich.text import Text

    if not asked:
        out.print(f"No questions recorded for {user}. / {user}의 질문 기록이 없습니다.")
        return
    table = Table(title=f"Last {len(asked)} questions of {user}")
    for name in (f"asked ({settings.timezone})", "route", "cached", "thread", "question"):
        table.add_column(name)
    for q in asked:
        when = dt.datetime.fromtimestamp(q.asked_at, settings.zone).strftime("%Y-%m-%d %H:%M")
        table.add_row(when, q.route, "yes" if q.cached else "", Text(q.thread_id), Text(q.text))
    out.print(table)
