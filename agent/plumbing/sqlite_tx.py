"""The one way our SQLite files take a write transaction."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def immediate(db: sqlite3.Connection) -> Iterator[None]:
    """BEGIN IMMEDIATE ... COMMIT, rolled back on any error.

    IMMEDIATE takes the write lock up front (waiting up to the busy timeout); a
    deferred transaction that upgrades later fails at once when another process
    writes. The connection must be in autocommit mode (``isolation_level=None``).
    """
    db.execute("BEGIN IMMEDIATE")
    try:
        yield
        db.execute("COMMIT")
    except BaseException:
        # A Ctrl-C can land after COMMIT finished but before it returned: then there is
        # nothing to roll back, and a failing ROLLBACK must not hide the interrupt.
        if db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        raise
