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


def postgres_problem(url: str = PG_URL) -> str | None:
    """Why no Postgres answers at ``url`` (one line), or None when one does."""
    try:
        with psycopg.connect(url, connect_timeout=2):
            return None
    except psycopg.Error as exc:
        return f"no Postgres at {url} (set TEAMRAG_TEST_DATABASE_URL): {' '.join(str(exc).split())}"


def postgres_reachable(url: str = PG_URL) -> bool:
    return postgres_problem(url) is None


def postgres_or_skip(url: str = PG_URL, *, needed_for: str = "") -> str:
    """The test database's URL; the test is skipped, saying why (and what it needed
    Postgres for), when nothing answers."""
    problem = postgres_problem(url)
    if problem is not None:
        pytest.skip(f"{problem}; {needed_for}" if needed_for else problem)
    return url


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
