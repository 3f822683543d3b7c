"""The bots' log: one line per record on stderr, as text or JSON, each with the thread
id and event id it belongs to (agent/plumbing/log_context.py binds them per turn).

JSON is for a log collector: one object per line with fixed field names, Korean
kept readable (no ``\\uXXXX`` escapes), a traceback in ``exc_info``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import IO

from pythonjsonlogger.json import JsonFormatter

from agent.plumbing.log_context import LogContextFilter
from bots.settings import Settings

TEXT_FORMAT = (
    "%(asctime)s %(levelname)s %(name)s [thread=%(thread_id)s event=%(event_id)s]: %(message)s"
)
JSON_FIELDS = "%(asctime)s %(levelname)s %(name)s %(message)s %(thread_id)s %(event_id)s"
JSON_NAMES = {"asctime": "time", "levelname": "level", "name": "logger"}


class _JsonFormatter(JsonFormatter):
    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        # ISO 8601 in UTC with milliseconds: sortable, and unambiguous across hosts.
        moment = datetime.fromtimestamp(record.created, tz=UTC)
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """Marks the handler this module installed, so a second call replaces it."""


def formatter(kind: str) -> logging.Formatter:
    if kind == "json":
        return _JsonFormatter(JSON_FIELDS, rename_fields=JSON_NAMES, json_ensure_ascii=False)
    return logging.Formatter(TEXT_FORMAT)


def configure_logging(settings: Settings, stream: IO[str] | None = None) -> logging.Handler:
    """Send the root logger's records to ``stream`` (stderr) in ``settings.log_format``.

    Calling it again replaces the handler it installed; other handlers (a test's
    capture, say) are left alone.
    """
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, _Handler)]:
        root.removeHandler(old)
    handler = _Handler(stream if stream is not None else sys.stderr)
    handler.setFormatter(formatter(settings.log_format))
    handler.addFilter(LogContextFilter())
    root.addHandler(handler)
    root.setLevel(settings.log_level)
    return handler


@contextmanager
def logging_configured(settings: Settings) -> Iterator[logging.Handler]:
    """``configure_logging`` for the length of a command, then undone.

    The handler holds the stream it was given: left on the root logger after the command
    returns (a test's CLI runner, a command run inside another program), it writes the
    next program's records to a closed stream ("I/O operation on closed file").
    """
    root = logging.getLogger()
    level = root.level
    handler = configure_logging(settings)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
