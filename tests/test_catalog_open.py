"""Which catalog a process opens (:func:`agent.retrieval.catalog.open_catalog`): the SQLite
file without ``DATABASE_URL``, and then the Postgres driver is never even imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent.retrieval.catalog import CatalogError, open_catalog
from agent.retrieval.catalog_sqlite import SqliteCatalog

# Runs the real `teamrag ingest`, then says which psycopg modules the process loaded.
_INGEST_AND_REPORT = """
import atexit, runpy, sys
atexit.register(lambda: print("loaded:", sorted(m for m in sys.modules if m.startswith("psycopg"))))
sys.argv = ["teamrag", "ingest", sys.argv[1]]
runpy.run_module("bots", run_name="__main__")
"""


def test_a_data_folder_setup_ingests_without_loading_psycopg(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "backups.md").write_text("# Backups\n\nPostgres backups are kept for 35 days.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEAMRAG_", "DATABASE_"))}
    env.update(TEAMRAG_DATA_DIR=str(tmp_path / "data"))
    done = subprocess.run(
        [sys.executable, "-c", _INGEST_AND_REPORT, str(docs)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "loaded: []" in done.stdout, done.stdout[-2000:]
    catalog = SqliteCatalog(tmp_path / "data" / "catalog.sqlite3")
    try:
        assert [Path(d.source).name for d in catalog.documents()] == ["backups.md"]
    finally:
        catalog.close()


def test_the_factory_opens_the_data_folder_file_without_a_database_url(tmp_path: Path) -> None:
    catalog = open_catalog(tmp_path)
    try:
        assert isinstance(catalog, SqliteCatalog)
        assert catalog.chunk_count() == 0
    finally:
        catalog.close()
    assert (tmp_path / "catalog.sqlite3").exists()


def test_the_factory_opens_postgres_when_a_database_url_asks_for_it(tmp_path: Path) -> None:
    # Nothing listens on port 1: the Postgres catalog is the one tried, and it says how
    # to fix the URL; no SQLite file appears in its place.
    with pytest.raises(CatalogError, match="DATABASE_URL"):
        open_catalog(tmp_path, "postgresql://teamrag@127.0.0.1:1/teamrag", "t_unused")
    assert not (tmp_path / "catalog.sqlite3").exists()
