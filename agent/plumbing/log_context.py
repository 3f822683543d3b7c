"""Which conversation a log line is about: the thread id and event id on every line.

A bot answers many threads at once, so its log interleaves them; a line without
the thread and the event it belongs to cannot be followed. Code that starts
work on a conversation binds its ids once (:func:`bind`); every log line written
inside, by any module, carries them (:class:`LogContextFilter`, installed on the
handlers by the bots' logging set-up). Context variables follow asyncio tasks,
so concurrent turns never see each other's ids.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import Iterator, Mapping
from types import MappingProxyType

FIELDS = ("thread_id", "event_id")

# Never mutated in place: bind() sets a new mapping, so the shared default stays empty.
_context: contextvars.ContextVar[Mapping[str, str]] = contextvars.ContextVar(
    "teamrag_log_context", default=MappingProxyType({})
)


@contextlib.contextmanager
def bind(**fields: str) -> Iterator[None]:
    """Add ``fields`` to every log line written inside the block (and in tasks it starts)."""
    token = _context.set({**_context.get(), **{k: v for k, v in fields.items() if v}})
    try:
        yield
    finally:
        _context.reset(token)


def current() -> dict[str, str]:
    return dict(_context.get())


class LogContextFilter(logging.Filter):
    """Puts the bound ids on each record (``-`` when none), for text and JSON formats."""

    def filter(self, record: logging.LogRecord) -> bool:
        bound = _context.get()
        for name in FIELDS:
            if not hasattr(record, name):
                setattr(record, name, bound.get(name, "-"))
        return True
