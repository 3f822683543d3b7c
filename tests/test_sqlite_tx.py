"""The one write-transaction helper: rolled back on errors, and an interrupt that lands
after the commit is reported as itself, not as a failed rollback."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from agent.plumbing.sqlite_tx import immediate


def connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE IF NOT EXISTS t (v INTEGER)")
    return db


def test_an_error_rolls_the_write_back(tmp_path: Path) -> None:
    db = connect(tmp_path / "a.sqlite")
    with pytest.raises(ValueError), immediate(db):
        db.execute("INSERT INTO t VALUES (1)")
        raise ValueError("boom")
    assert db.execute("SELECT count(*) FROM t").fetchone() == (0,)
    assert not db.in_transaction


def test_an_interrupt_after_the_commit_is_not_hidden_by_the_rollback(tmp_path: Path) -> None:
    """Ctrl-C between COMMIT finishing and returning: nothing is left to roll back, and
    the caller must still see KeyboardInterrupt (it printed "cannot rollback" before)."""
    db = connect(tmp_path / "b.sqlite")
    with pytest.raises(KeyboardInterrupt), immediate(db):
        db.execute("INSERT INTO t VALUES (1)")
        db.execute("COMMIT")  # as if the commit had run
        raise KeyboardInterrupt
    assert db.execute("SELECT count(*) FROM t").fetchone() == (1,)
