"""Server URLs as they may be shown: in error messages, logs, tables and /readyz bodies."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def redact_url(url: str) -> str:
    """``url`` without its password (``redis://:***@host:6379/0``); unchanged without one."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "(unparsable URL)"
    if parts.password is None:
        return url
    host = (parts.hostname or "") + (f":{port}" if port is not None else "")
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))
