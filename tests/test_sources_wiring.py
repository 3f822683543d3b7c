"""The scheduler inside a bot: it never delays the bot's start or stop when no source
exists, and picks up a source added while the bot runs."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from agent.retrieval.knowledge_base import KnowledgeBase
from agent.sources.base import SourceSpec
from agent.sources.store import SqliteSourceStore
from bots.settings import Settings
from bots.sources_wiring import running_sources
from tests.fakes.web_site import FakeSite, html_page
from tests.support.slack_support import until


def tables(catalog: Path) -> set[str]:
    with sqlite3.connect(catalog) as db:
        return {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}


async def test_without_sources_the_scheduler_opens_nothing_and_stops_at_once(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    settings = Settings(data_dir=kb.data_dir)
    loop = asyncio.get_running_loop()
    async with running_sources(settings, kb) as task:
        assert task is not None
        assert not task.done()
        stopping = loop.time()
    assert task.done() and loop.time() - stopping < 1.0
    assert "sources" not in tables(kb.data_dir / "catalog.sqlite3")


async def test_a_source_added_while_the_bot_runs_is_synced(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    site = FakeSite()
    site.set_page("/", html_page("Wiki", "The VPN gateway is called HERON-7."))
    site.start()
    settings = Settings(data_dir=kb.data_dir)
    store = SqliteSourceStore(kb.data_dir / "catalog.sqlite3")
    try:
        async with running_sources(settings, kb, idle_poll_s=0.05):
            store.add(SourceSpec("wiki", "web", site.url + "/", "public", 3600, {}, True))
            state = await until(
                lambda: (
                    s if (s := store.get("wiki")) is not None and s.last_ok is not None else None
                ),
                what="the scheduler to sync the new source",
            )
    finally:
        store.close()
        site.stop()
    assert state.documents == 1
