"""The test Postgres (``TEAMRAG_TEST_DATABASE_URL``, default the local ``test`` database):
whether it answers, and a schema of its own per test, dropped afterwards."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

PG_URL = os.environ.get("TEAMRAG_TEST_DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/test")


def postgres_or_skip() -> str:
    """The test database's URL; the test is skipped, saying why, when nothing answers."""
    try:
        with psycopg.connect(PG_URL, connect_timeout=2):
            return PG_URL
    except psycopg.Error as exc:
        pytest.skip(f"no Postgres at {PG_URL}: {' '.join(str(exc).split())}")


@contextmanager
def own_schema(prefix: str = "t") -> Iterator[str]:
    """A schema name no other test or run uses (created by whoever opens it first),
    dropped with everything in it at the end."""
    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    try:
        yield name
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def schema_exists(name: str) -> bool:
    with psycopg.connect(PG_URL) as db:
        row = db.execute("SELECT to_regnamespace(%s)", (name,)).fetchone()
    return row is not None and row[0] is not None
