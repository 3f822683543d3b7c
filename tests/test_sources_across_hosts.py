"""Sources shared through Postgres (``DATABASE_URL``): added on one host, listed and synced
by another whose data folder is empty; and a data folder from before the move, pointed
out and copied over."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.retrieval.catalog_postgres import PostgresCatalog
from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions, collection_name
from agent.retrieval.vectors import VectorStore
from agent.sources.store_postgres import PostgresSourceStore
from bots.settings import Settings
from bots.sources_wiring import running_sources
from tests.fakes.web_site import FakeSite, html_page
from tests.support.slack_support import until

REPO = Path(__file__).resolve().parent.parent
# What the developer's shell has set must not reach the hosts under test.
_FOREIGN = ("TEAMRAG_", "DATABASE_URL", "REDIS_URL", "CHROMA_URL", "OPENAI_", "TAVILY_")


@pytest.fixture
def site() -> Iterator[FakeSite]:
    site = FakeSite()
    site.set_page("/", html_page("Wiki", "Start.", ["/vpn.html"]))
    site.set_page("/vpn.html", html_page("VPN", "The VPN gateway is called HERON-7."))
    site.start()
    yield site
    site.stop()


def host(
    data: Path, *args: str, shared: tuple[str, str] | None
) -> subprocess.CompletedProcess[str]:
    """``teamrag ARGS`` as a host with its own data folder, on the shared Postgres or not."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN)}
    env |= {"TEAMRAG_DATA_DIR": str(data), "TEAMRAG_EMBED_PROCESSES": "1", "COLUMNS": "200"}
    if shared is not None:
        env |= {"DATABASE_URL": shared[0], "TEAMRAG_CATALOG_SCHEMA": shared[1]}
    done = subprocess.run(
        [sys.executable, "-m", "bots", *args],
        env=env,
        cwd=data.parent,  # no .env from the repository
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return done


async def test_a_source_added_on_one_host_is_listed_and_synced_by_another(
    tmp_path: Path,
    postgres_schema: tuple[str, str],
    site: FakeSite,
    embedder: UniversalSentenceEncoder,
) -> None:
    url, schema = postgres_schema
    host_a, host_b = tmp_path / "host-a", tmp_path / "host-b"
    host(host_a, "sources", "add", "web", site.url + "/", "--name", "wiki", "--depth", "1",
         "--allow-private", shared=postgres_schema)  # fmt: skip
    listed = host(host_b, "sources", "list", shared=postgres_schema).stdout
    assert "wiki" in listed and "never" in listed  # host B sees it, not synced yet

    # Host B's scheduler (a bot's), on an empty data folder: it finds the source and syncs it.
    settings = Settings(data_dir=host_b, database_url=url, catalog_schema=schema)
    vectors = VectorStore.embedded(host_b / "chroma", collection_name(embedder.name))
    kb = KnowledgeBase(host_b, embedder, vectors, catalog=PostgresCatalog(url, schema))
    store = PostgresSourceStore(url, schema)
    try:
        async with running_sources(settings, kb, idle_poll_s=0.05):
            state = await until(
                lambda: (
                    s if (s := store.get("wiki")) is not None and s.last_ok is not None else None
                ),
                timeout=120,
                what="host B's scheduler to sync the source host A added",
            )
        assert state.documents == 2 and state.last_error is None
        hits = kb.search("VPN gateway", SearchOptions(k=3, mode="keyword", neighbours=0))
        assert "HERON-7" in " ".join(h.chunk.text for h in hits)
    finally:
        store.close()
        kb.close()

    # Host A lists what host B did, and searches the documents host B loaded.
    row = next(line for line in host(host_a, "sources", "list", shared=postgres_schema)
               .stdout.splitlines() if "wiki" in line)  # fmt: skip
    assert " 2 " in row and "never" not in row
    found = host(host_a, "search", "VPN gateway", "--mode", "keyword", "--json",
                 shared=postgres_schema).stdout  # fmt: skip
    assert "HERON-7" in found
    for data in (host_a, host_b):
        assert not (data / "catalog.sqlite3").exists()  # nothing of it in a data folder


def test_sources_of_a_data_folder_from_before_are_pointed_out_and_copied(
    tmp_path: Path, postgres_schema: tuple[str, str], site: FakeSite
) -> None:
    """An upgrade with DATABASE_URL set finds the shared sources empty: the sources the
    data folder's file lists are named, with the command that copies them, until copied."""
    data = tmp_path / "data"
    host(data, "sources", "add", "web", site.url + "/", "--name", "wiki", "--every", "2h",
         "--depth", "1", "--allow-private", shared=None)  # fmt: skip
    before = host(data, "sources", "list", shared=postgres_schema)
    assert "No sources yet" in before.stdout  # the shared store is empty...
    warning = " ".join(before.stderr.split())
    assert "lists 1 sources (wiki) added before the sources moved to Postgres" in warning
    assert "run `teamrag sources import-local`" in warning  # ...and the fix is named

    copied = host(data, "sources", "import-local", shared=postgres_schema)
    assert "Copied 1 sources to Postgres" in copied.stdout and "wiki" in copied.stdout
    after = host(data, "sources", "list", shared=postgres_schema)
    assert "moved to Postgres" not in after.stderr
    row = next(line for line in after.stdout.splitlines() if "wiki" in line)
    assert "2h" in row and "due" in row  # the spec as added; its first sync loads it all
    assert "allowed" in row  # with its opt-in to the site's local address
    again = host(data, "sources", "import-local", shared=postgres_schema)
    assert "Copied 0 sources" in again.stdout
    assert "the shared store has a source named wiki" in " ".join(again.stderr.split())
