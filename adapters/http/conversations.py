"""Conversations and their messages, stored whole, each owned by one account.

A conversation's id is also the thread root of its turns, so its history lives in
the same LangGraph thread a Slack thread would use. Every read and write names the
owner: another account's conversation is simply not found.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, RowMapping

from adapters.http.db import Database, chat_threads, conversations, messages

TITLE_CHARS = 30


def new_id() -> str:
    return uuid.uuid4().hex


def title_of(question: str) -> str:
    """The first 30 characters of the first question, on one line."""
    text = " ".join(question.split())
    return text[:TITLE_CHARS] or "…"


@dataclass(frozen=True)
class Conversation:
    id: str
    owner: str
    title: str
    created_at: float
    updated_at: float


@dataclass(frozen=True)
class Message:
    id: str
    conversation_id: str
    role: str  # "user" or "assistant"
    content: str
    created_at: float
    sources: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


def unsaved(owner: str, title: str) -> Conversation:
    """A new conversation, not stored yet (its first turn stores it)."""
    now = time.time()
    return Conversation(new_id(), owner, title[:200], now, now)


def _conversation(row: RowMapping) -> Conversation:
    return Conversation(
        row["id"], row["owner"], row["title"], float(row["created_at"]), float(row["updated_at"])
    )


def _message(row: RowMapping) -> Message:
    return Message(
        id=row["id"],
        conversation_id=row["conversation_id"],
        role=row["role"],
        content=row["content"],
        created_at=float(row["created_at"]),
        sources=json.loads(row["sources"]),
        meta=json.loads(row["meta"]),
    )


def _insert(conn: Connection, made: Conversation) -> None:
    conn.execute(
        conversations.insert().values(
            id=made.id,
            owner=made.owner,
            title=made.title,
            created_at=made.created_at,
            updated_at=made.updated_at,
        )
    )


def _insert_message(conn: Connection, message: Message) -> None:
    conn.execute(
        messages.insert().values(
            id=message.id,
            conversation_id=message.conversation_id,
            role=message.role,
            content=message.content,
            sources=json.dumps(message.sources, ensure_ascii=False),
            meta=json.dumps(message.meta, ensure_ascii=False),
            created_at=message.created_at,
        )
    )
    conn.execute(
        conversations.update()
        .where(conversations.c.id == message.conversation_id)
        .values(updated_at=message.created_at)
    )


def _owned(conversation_id: str, owner: str) -> sa.ColumnElement[bool]:
    return sa.and_(conversations.c.id == conversation_id, conversations.c.owner == owner)


class ConversationStore:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, owner: str, title: str) -> Conversation:
        made = unsaved(owner, title)
        await self.db.run(lambda conn: _insert(conn, made))
        return made

    async def add_question(
        self, conversation: Conversation, question: Message, *, new: bool
    ) -> None:
        """Store a question, and its conversation first when it is ``new`` (one transaction)."""

        def insert(conn: Connection) -> None:
            if new:
                _insert(conn, conversation)
            _insert_message(conn, question)

        await self.db.run(insert)

    async def get(self, conversation_id: str, owner: str) -> Conversation | None:
        def select(conn: Connection) -> Conversation | None:
            query = sa.select(conversations).where(_owned(conversation_id, owner))
            row = conn.execute(query).mappings().first()
            return _conversation(row) if row else None

        return await self.db.run(select)

    async def find(self, conversation_id: str) -> Conversation | None:
        """A conversation whoever owns it: only for the admin view of a knowledge gap's
        conversation (``/api/admin/conversations/{id}``), which checks the gap first."""

        def select(conn: Connection) -> Conversation | None:
            query = sa.select(conversations).where(conversations.c.id == conversation_id)
            row = conn.execute(query).mappings().first()
            return _conversation(row) if row else None

        return await self.db.run(select)

    async def page(self, owner: str, limit: int, offset: int) -> list[Conversation]:
        """The owner's conversations, most recently updated first."""

        def select(conn: Connection) -> list[Conversation]:
            query = (
                sa.select(conversations)
                .where(conversations.c.owner == owner)
                .order_by(conversations.c.updated_at.desc(), conversations.c.id)
                .limit(limit)
                .offset(offset)
            )
            return [_conversation(r) for r in conn.execute(query).mappings()]

        return await self.db.run(select)

    async def messages(self, conversation_id: str) -> list[Message]:
        def select(conn: Connection) -> list[Message]:
            query = (
                sa.select(messages)
                .where(messages.c.conversation_id == conversation_id)
                .order_by(messages.c.seq)
            )
            return [_message(r) for r in conn.execute(query).mappings()]

        return await self.db.run(select)

    async def add_message(self, message: Message) -> None:
        await self.db.run(lambda conn: _insert_message(conn, message))

    async def message_owner(self, message_id: str) -> tuple[str, str] | None:
        """(owner, role) of a message, or None when there is no such message."""

        def select(conn: Connection) -> tuple[str, str] | None:
            query = (
                sa.select(conversations.c.owner, messages.c.role)
                .join(conversations, conversations.c.id == messages.c.conversation_id)
                .where(messages.c.id == message_id)
            )
            row = conn.execute(query).first()
            return (row[0], row[1]) if row else None

        return await self.db.run(select)

    async def rename(self, conversation_id: str, owner: str, title: str) -> bool:
        def update(conn: Connection) -> int:
            done = conn.execute(
                conversations.update().where(_owned(conversation_id, owner)).values(title=title)
            )
            return done.rowcount

        return bool(await self.db.run(update))

    async def delete(self, conversation_id: str, owner: str) -> bool:
        def remove(conn: Connection) -> int:
            # Explicitly, not only by cascade: a SQLite file opened without foreign keys
            # (another tool) must not keep the messages.
            if not conn.execute(
                sa.select(conversations.c.id).where(_owned(conversation_id, owner))
            ).first():
                return 0
            conn.execute(
                chat_threads.delete().where(chat_threads.c.conversation_id == conversation_id)
            )
            conn.execute(messages.delete().where(messages.c.conversation_id == conversation_id))
            return conn.execute(
                conversations.delete().where(_owned(conversation_id, owner))
            ).rowcount

        return bool(await self.db.run(remove))

    # The OpenAI-compatible endpoint's history digests.

    async def by_digest(self, owner: str, digest: str) -> str | None:
        def select(conn: Connection) -> str | None:
            query = sa.select(chat_threads.c.conversation_id).where(
                chat_threads.c.owner == owner, chat_threads.c.digest == digest
            )
            value = conn.execute(query).scalar()
            return str(value) if value else None

        return await self.db.run(select)

    async def remember_digest(self, owner: str, digest: str, conversation_id: str) -> None:
        def upsert(conn: Connection) -> None:
            conn.execute(
                chat_threads.delete().where(
                    chat_threads.c.owner == owner, chat_threads.c.digest == digest
                )
            )
            conn.execute(
                chat_threads.insert().values(
                    owner=owner, digest=digest, conversation_id=conversation_id
                )
            )

        # Written at the same moment by the same turn's other path: the same row.
        with contextlib.suppress(sa.exc.IntegrityError):
            await self.db.run(upsert)
