"""One sync of a source at a time across every host that shares the Postgres database.

With ``DATABASE_URL`` the sources live in Postgres and any host's scheduler may run
them, so the lock must span hosts: a session-level advisory lock, taken on a
connection of its own and held while the sync runs. A host that dies mid-sync frees
its sources at once: Postgres ends the session, and its locks with it (no lease to
wait out, as with Redis).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import psycopg

from agent.sources.store import SourceStoreError


class PostgresSyncLock:
    def __init__(self, url: str, schema: str = "teamrag") -> None:
        self.url = url
        # The two-key form of advisory locks has its own key space: it never meets the
        # one-key locks the catalog takes. The schema keeps two deployments in one
        # database apart.
        self.space = f"teamrag-source-sync:{schema}"

    @contextlib.asynccontextmanager
    async def hold(self, name: str) -> AsyncIterator[bool]:
        try:
            db = await psycopg.AsyncConnection.connect(
                self.url, autocommit=True, connect_timeout=10
            )
        except psycopg.OperationalError as exc:
            raise SourceStoreError(
                f"cannot take a source's sync lock in Postgres ({' '.join(str(exc).split())}); "
                "start Postgres or fix DATABASE_URL"
            ) from exc
        held = False
        try:
            cursor = await db.execute(
                "SELECT pg_try_advisory_lock(hashtext(%s), hashtext(%s))", (self.space, name)
            )
            row = await cursor.fetchone()
            held = bool(row and row[0])
            yield held
        finally:
            try:
                if held and not db.broken:
                    # Released before we return: closing the session also releases it, but
                    # only once the server has ended that session, a moment later, and the
                    # next host asking at once would find the source still held.
                    with contextlib.suppress(psycopg.Error):
                        await db.execute(
                            "SELECT pg_advisory_unlock(hashtext(%s), hashtext(%s))",
                            (self.space, name),
                        )
            finally:
                await db.close()  # ends the session: a lock not released goes with it
