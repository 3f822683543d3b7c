"""The sources store, run once over each backend (the data folder's SQLite file and the
shared Postgres schema): what one process or host writes, another opening reads."""

from __future__ import annotations

import threading
from pathlib import Path

import psycopg
import pytest

from agent.sources.base import SourceSpec
from agent.sources.store import SourceExistsError
from agent.sources.store_postgres import PostgresSourceStore
from bots.settings import Settings
from bots.sources_wiring import has_sources, open_source_store
from tests.support.postgres_support import schema_exists
from tests.support.sources_support import OpenStore

WIKI = SourceSpec("wiki", "web", "https://wiki.example/", "eng", 600.0, {"depth": 2})


def test_a_source_added_in_one_process_is_read_by_another(open_source_store: OpenStore) -> None:
    here, there = open_source_store(), open_source_store()
    here.add(WIKI, now=100.0)
    state = there.get("wiki")
    assert state is not None and state.spec == WIKI
    assert (state.created_at, state.next_run, state.last_sync, state.last_ok) == (
        100.0, 100.0, None, None,
    )  # fmt: skip
    assert (state.failures, state.documents, state.checkpoint, state.basis) == (0, 0, {}, "")
    with pytest.raises(SourceExistsError, match="teamrag sources remove wiki"):
        there.add(WIKI)
    assert there.get("nothing") is None
    there.add(SourceSpec("api-docs", "git", "https://git.example/docs.git", "eng", 0.0))
    assert [s.spec.name for s in here.all()] == ["api-docs", "wiki"]


def test_due_and_next_wake_follow_each_schedule(open_source_store: OpenStore) -> None:
    store = open_source_store()
    store.add(SourceSpec("hourly", "web", "https://a.example/", "public", 3600.0), now=100.0)
    store.add(SourceSpec("often", "web", "https://b.example/", "public", 60.0), now=50.0)
    store.add(SourceSpec("manual", "web", "https://c.example/", "public", 0.0), now=10.0)
    assert store.next_wake() == 50.0  # a manual source never wakes the scheduler
    assert [s.spec.name for s in store.due(100.0)] == ["often", "hourly"]  # longest waiting
    assert [s.spec.name for s in store.due(99.0)] == ["often"]
    store.record_success("often", now=100.0, next_run=160.0, checkpoint={}, basis="b",
                         members=set())  # fmt: skip
    assert store.next_wake() == 100.0
    assert [s.spec.name for s in open_source_store().due(150.0)] == ["hourly"]


def test_failures_count_up_and_a_success_records_its_checkpoint_and_members(
    open_source_store: OpenStore,
) -> None:
    store = open_source_store()
    store.add(WIKI, now=0.0)
    store.record_failure("wiki", now=10.0, next_run=70.0, error="HTTP 500")
    store.record_failure("wiki", now=70.0, next_run=190.0, error="timed out")
    failed = open_source_store().get("wiki")
    assert failed is not None
    assert (failed.failures, failed.last_error, failed.last_sync, failed.next_run) == (
        2, "timed out", 70.0, 190.0,
    )  # fmt: skip
    assert failed.last_ok is None

    first = {f"https://wiki.example/p{i}" for i in range(3)}
    store.record_success("wiki", now=200.0, next_run=800.0, checkpoint={"etag": {"p0": "x"}},
                         basis="eng|pipe", members=first)  # fmt: skip
    second = (first - {"https://wiki.example/p0"}) | {"https://wiki.example/new"}
    store.record_success("wiki", now=800.0, next_run=1400.0, checkpoint={"etag": {}},
                         basis="eng|pipe", members=second)  # fmt: skip
    other = open_source_store()
    synced = other.get("wiki")
    assert synced is not None
    assert (synced.failures, synced.last_error, synced.last_sync, synced.last_ok) == (
        0, None, 800.0, 800.0,
    )  # fmt: skip
    assert (synced.checkpoint, synced.basis, synced.documents) == ({"etag": {}}, "eng|pipe", 3)
    assert other.members("wiki") == second


def test_shared_documents_stay_with_the_other_source_when_one_is_removed(
    open_source_store: OpenStore,
) -> None:
    store = open_source_store()
    store.add(WIKI, now=0.0)
    store.add(SourceSpec("mirror", "web", "https://mirror.example/", "eng", 600.0), now=0.0)
    # More keys than one SQLite statement may carry (batches of 500).
    mine = {f"https://wiki.example/p{i}" for i in range(1200)}
    shared = {"https://wiki.example/p7", "https://wiki.example/p1100"}
    store.record_success("wiki", now=1.0, next_run=2.0, checkpoint={}, basis="", members=mine)
    store.record_success("mirror", now=1.0, next_run=2.0, checkpoint={}, basis="",
                         members=shared | {"https://mirror.example/only"})  # fmt: skip
    assert store.owned_elsewhere("wiki", mine) == shared
    assert store.owned_elsewhere("mirror", ["https://mirror.example/only"]) == set()
    store.delete("wiki")
    assert open_source_store().get("wiki") is None and store.members("wiki") == set()
    assert store.owned_elsewhere("mirror", shared) == set()
    store.add(WIKI, now=5.0)  # the name is free again, with no members left over
    assert store.members("wiki") == set()


def test_two_processes_adding_one_name_at_once_one_is_told(open_source_store: OpenStore) -> None:
    stores = [open_source_store() for _ in range(4)]
    outcomes: list[str] = []
    start = threading.Barrier(len(stores))

    def add(store_index: int) -> None:
        start.wait()
        try:
            stores[store_index].add(WIKI)
            outcomes.append("added")
        except SourceExistsError:
            outcomes.append("exists")

    threads = [threading.Thread(target=add, args=(i,)) for i in range(len(stores))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["added", "exists", "exists", "exists"]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_looking_for_sources_creates_nothing(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A process without sources (every bot by default) must not create their tables."""
    settings = Settings(data_dir=tmp_path / "data", database_url=None)
    if backend == "postgres":
        url, schema = request.getfixturevalue("postgres_schema")
        settings = Settings(data_dir=tmp_path / "data", database_url=url, catalog_schema=schema)
    assert not has_sources(settings)
    assert not (tmp_path / "data").exists()
    if backend == "postgres":
        assert not schema_exists(settings.catalog_schema)
    store = open_source_store(settings)
    try:
        assert not has_sources(settings)  # the tables, no row
        store.add(WIKI)
        assert has_sources(settings)
    finally:
        store.close()
    if backend == "postgres":
        assert not (tmp_path / "data").exists()  # nothing in the data folder


def test_the_postgres_store_connects_again_after_its_session_ends(
    postgres_schema: tuple[str, str],
) -> None:
    """Postgres restarted (here: the session killed): the call that finds out fails, the
    next one works on a new connection, so a bot's scheduler recovers by itself."""
    url, schema = postgres_schema
    store = PostgresSourceStore(url, schema)
    try:
        store.add(WIKI)
        pid = store._db.info.backend_pid  # the session a server restart would end
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        with pytest.raises(psycopg.OperationalError):
            store.all()
        assert [s.spec.name for s in store.all()] == ["wiki"]
    finally:
        store.close()
