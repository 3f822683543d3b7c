"""The data folder is the owner's alone: created 0700, what SQLite makes in it 0600, and
what an older version left readable by others tightened once, with one log line."""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from bots.data_folder import DataFolderError, make_private


@pytest.fixture(autouse=True)
def restore_umask() -> Iterator[None]:
    # make_private sets the process's umask; the rest of the test run keeps its own.
    before = os.umask(0o022)
    os.umask(before)
    yield
    os.umask(before)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_folder_and_what_sqlite_makes_in_it_are_private(tmp_path: Path) -> None:
    os.umask(0o022)
    folder = tmp_path / "data"
    assert make_private(folder) == []
    assert not folder.exists()  # made by the first store that needs it, not before
    folder.mkdir()
    assert mode(folder) == 0o700
    sqlite3.connect(folder / "http.sqlite").execute("create table t (x)").connection.commit()
    (folder / "chroma").mkdir()
    assert mode(folder / "http.sqlite") == 0o600 and mode(folder / "chroma") == 0o700


def test_an_open_folder_is_tightened_once_and_said_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    os.umask(0o022)
    folder = tmp_path / "data"
    (folder / "chroma").mkdir(parents=True, mode=0o755)
    folder.chmod(0o755)
    for name in ("memory.sqlite", "catalog.sqlite3", "chroma/chroma.sqlite3"):
        (folder / name).write_text("x")
        (folder / name).chmod(0o644)
    (folder / "jwt_secret").write_text("s")
    (folder / "jwt_secret").chmod(0o600)  # already private: left as it is
    with caplog.at_level(logging.WARNING, logger="bots.data_folder"):
        tightened = make_private(folder)
        assert make_private(folder) == []  # the second start has nothing to say
    assert len(tightened) == 5
    assert [r.getMessage() for r in caplog.records if "took group and other" in r.getMessage()]
    assert len(caplog.records) == 1 and "5 files and folders" in caplog.records[0].getMessage()
    assert {mode(p) for p in folder.rglob("*") if p.is_file()} == {0o600}
    assert mode(folder) == 0o700 and mode(folder / "chroma") == 0o700


def test_a_data_folder_that_is_a_file_is_said_with_the_setting(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(DataFolderError, match="TEAMRAG_DATA_DIR"):
        make_private(blocker)
