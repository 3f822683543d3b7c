"""The HTTP service's tables (accounts, conversations, messages) in SQLite or Postgres.

SQLite in the data folder by default; Postgres when ``DATABASE_URL`` is set, so every
worker of a team sees the same accounts and conversations. The schema is versioned
in a ``teamrag_http_schema`` table: each entry of :data:`MIGRATIONS` runs once, in
order, in its own transaction, so a later release adds a column with one more entry
instead of asking anyone to drop their data.

Calls are synchronous (SQLAlchemy Core) and run in the database's own few threads
(:meth:`Database.run`): a slow disk or a busy Postgres must not stall the event loop
streaming other answers, and a request's small reads and writes must not queue behind
the searches and embeddings of fifty answers under way in the default pool.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

T = TypeVar("T")

metadata = sa.MetaData()

accounts = sa.Table(
    "teamrag_accounts",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("password_hash", sa.Text, nullable=True),
    sa.Column("is_admin", sa.Boolean, nullable=False, default=False),
    sa.Column("scopes", sa.Text, nullable=False, default="[]"),  # JSON list
    sa.Column("disabled", sa.Boolean, nullable=False, default=False),
    sa.Column("created_at", sa.Float, nullable=False),
    # Raised by a password change; a token carries the value it was issued under, so the
    # change revokes every earlier token (schema version 2).
    sa.Column("token_generation", sa.Integer, nullable=False, default=0, server_default="0"),
)

conversations = sa.Table(
    "teamrag_conversations",
    metadata,
    sa.Column("id", sa.String(40), primary_key=True),
    sa.Column("owner", sa.String(64), nullable=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("updated_at", sa.Float, nullable=False),
    sa.Index("teamrag_conversations_by_owner", "owner", "updated_at"),
)

messages = sa.Table(
    "teamrag_messages",
    metadata,
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(40), nullable=False, unique=True),
    sa.Column(
        "conversation_id",
        sa.String(40),
        sa.ForeignKey("teamrag_conversations.id", ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("sources", sa.Text, nullable=False, default="[]"),  # JSON list
    sa.Column("meta", sa.Text, nullable=False, default="{}"),  # JSON: route, model, usage...
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Index("teamrag_messages_by_conversation", "conversation_id", "seq"),
)

# An OpenAI-style client sends the whole history with every request: the digest of the
# messages before the new question finds the conversation (and so the LangGraph thread)
# that the earlier answer belongs to.
chat_threads = sa.Table(
    "teamrag_chat_threads",
    metadata,
    sa.Column("owner", sa.String(64), primary_key=True),
    sa.Column("digest", sa.String(64), primary_key=True),
    sa.Column(
        "conversation_id",
        sa.String(40),
        sa.ForeignKey("teamrag_conversations.id", ondelete="CASCADE"),
        nullable=False,
    ),
)

_versions = sa.Table(
    "teamrag_http_schema",
    metadata,
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("applied_at", sa.Float, nullable=False),
)


def _create_v1(conn: Connection) -> None:
    for table in (accounts, conversations, messages, chat_threads):
        table.create(conn, checkfirst=True)


def _token_generation_v2(conn: Connection) -> None:
    # A database created by this release has the column from v1 already (v1 creates the
    # table as declared above); one from an earlier release gets it here.
    if "token_generation" in {c["name"] for c in sa.inspect(conn).get_columns(accounts.name)}:
        return
    column = accounts.c.token_generation
    conn.execute(
        sa.text(
            f"ALTER TABLE {accounts.name} ADD COLUMN {column.name} "
            f"{column.type.compile(dialect=conn.dialect)} NOT NULL DEFAULT 0"
        )
    )


MIGRATIONS: list[Callable[[Connection], None]] = [_create_v1, _token_generation_v2]
"""Migration ``n`` (1-based) brings the schema from version ``n - 1`` to ``n``."""


def engine_url(database_url: str | None, data_dir: Path) -> str:
    """SQLAlchemy's URL for ``DATABASE_URL`` (psycopg 3 driver), or the SQLite file."""
    if not database_url:
        return f"sqlite:///{data_dir / 'http.sqlite'}"
    for prefix in ("postgresql://", "postgres://"):
        if database_url.startswith(prefix):
            return "postgresql+psycopg://" + database_url[len(prefix) :]
    return database_url


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")  # deleting a conversation deletes its messages
    cursor.execute("PRAGMA journal_mode=WAL")  # the CLI reads while the service writes
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.close()


class Database:
    """One engine, migrated to the latest schema on open."""

    def __init__(self, url: str, *, threads: int = 4) -> None:
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="teamrag-db")
        if url.startswith("sqlite:///"):
            Path(url.removeprefix("sqlite:///")).parent.mkdir(parents=True, exist_ok=True)
            self.engine: Engine = sa.create_engine(url, connect_args={"check_same_thread": False})
            sa.event.listen(self.engine, "connect", _sqlite_pragmas)
        else:
            self.engine = sa.create_engine(url, pool_pre_ping=True, pool_size=10)
        self.version = self._migrate()

    @classmethod
    def open(cls, database_url: str | None, data_dir: Path) -> Database:
        return cls(engine_url(database_url, data_dir))

    def _migrate(self) -> int:
        import time

        with self.engine.begin() as conn:
            _versions.create(conn, checkfirst=True)
            current = conn.execute(sa.select(sa.func.max(_versions.c.version))).scalar() or 0
        for number, migration in enumerate(MIGRATIONS[current:], current + 1):
            with self.engine.begin() as conn:
                migration(conn)
                conn.execute(_versions.insert().values(version=number, applied_at=time.time()))
        return len(MIGRATIONS)

    async def run(self, work: Callable[[Connection], T]) -> T:
        """``work`` in one transaction, in one of the database's threads."""
        return await self.call(self.transaction, work)

    async def call(self, function: Callable[..., T], *args: Any) -> T:
        """A blocking call that uses the database, in one of its threads."""
        return await asyncio.get_running_loop().run_in_executor(self._pool, function, *args)

    def transaction(self, work: Callable[[Connection], T]) -> T:
        with self.engine.begin() as conn:
            return work(conn)

    def close(self) -> None:
        self._pool.shutdown(wait=True)
        self.engine.dispose()
