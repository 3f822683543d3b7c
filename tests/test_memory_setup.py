"""Workers that start together on a Postgres without LangGraph's tables.

Each test gets a schema of its own, empty, named first on the connection's search path,
so LangGraph's migrations run for real (CREATE TABLE, CREATE INDEX CONCURRENTLY) as on
a team's first deployment. Skipped when no Postgres answers.
"""

from __future__ import annotations

import asyncio
import urllib.parse
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from agent.memory import backends
from agent.memory.backends import MemoryBackendError, open_checkpointer, open_store
from tests.support.memory_support import ask, build_graph, thread_texts
from tests.support.postgres_support import PG_URL


@pytest.fixture
def empty_schema_url() -> Iterator[str]:
    """A Postgres URL whose tables land in a new, empty schema, dropped afterwards."""
    schema = f"setup_{uuid.uuid4().hex[:12]}"
    try:
        admin = psycopg.connect(PG_URL, autocommit=True, connect_timeout=2)
    except psycopg.Error as exc:
        pytest.skip(f"Postgres unreachable at {PG_URL}: {' '.join(str(exc).split())}")
    with admin:
        admin.execute(f"CREATE SCHEMA {schema}")
        options = urllib.parse.quote(f"-csearch_path={schema}")
        separator = "&" if "?" in PG_URL else "?"
        try:
            yield f"{PG_URL}{separator}options={options}"
        finally:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


async def start_worker(url: str, folder: Path) -> None:
    """What a worker opens at start-up: thread memory and the per-user store."""
    async with open_checkpointer(url, folder / "x.sqlite"), open_store(url, folder / "y.sqlite"):
        pass


async def test_workers_starting_together_on_an_empty_database_all_start(
    empty_schema_url: str, tmp_path: Path
) -> None:
    """A worker waiting inside ``pg_advisory_lock`` held a snapshot that the lock holder's
    CREATE INDEX CONCURRENTLY waited for: two workers hung for good (seen on a fresh
    machine, where every multi-worker test and ``make bench-team`` timed out)."""
    starts = [start_worker(empty_schema_url, tmp_path / str(n)) for n in range(3)]
    await asyncio.wait_for(asyncio.gather(*starts), timeout=60)
    # The tables are there and shared: a thread written by one worker is read by another.
    async with open_checkpointer(empty_schema_url, tmp_path / "a.sqlite") as saver:
        await ask(build_graph(saver), "setup-thread", "hello")
    async with open_checkpointer(empty_schema_url, tmp_path / "b.sqlite") as saver:
        texts = await thread_texts(build_graph(saver), "setup-thread")
    assert texts == ["hello", "answer 1: hello"]


async def test_a_hung_migration_elsewhere_is_named_not_waited_on_forever(
    empty_schema_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(backends, "SETUP_WAIT_S", 0.5)
    # Another process took the lock and never let go (hung mid-migration).
    with psycopg.connect(PG_URL, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (backends._SETUP_LOCK_KEY,))
        with pytest.raises(MemoryBackendError) as caught:
            await asyncio.wait_for(start_worker(empty_schema_url, tmp_path), timeout=30)
    message = str(caught.value)
    assert "creating LangGraph's tables" in message
    assert "for over 0.5 s" in message
    assert "pg_stat_activity" in message
