"""Where a source's fetches go, checked when the source is added.

The kinds check every request at sync time (agent/net/guarded.py, git's host check);
this tells the user at ``teamrag sources add`` already, with the opt-in to use, instead
of at the first sync in a bot's log.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from agent.net.address_policy import AddressPolicy, AddressRefused, Unresolvable
from agent.sources.base import SourceSpec
from agent.sources.git import remote_host

__all__ = ["AddressRefused", "first_host", "unreachable_reason"]


def first_host(spec: SourceSpec) -> tuple[str, int]:
    """The host (and port) a source fetches from first; ``("", 0)`` when it names none
    (a local Git path, a chat channel, a service's public API by default)."""
    if spec.kind == "git":
        return remote_host(spec.target)
    url = spec.target if spec.kind == "web" else str(spec.option("api_url") or "")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "", 0
    return parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)


def unreachable_reason(spec: SourceSpec, policy: AddressPolicy) -> str | None:
    """Why the source's host cannot be resolved now (a warning: the bots' host may), or
    None. Raises :class:`AddressRefused` when the policy refuses the host."""
    host, port = first_host(spec)
    if not host:
        return None
    try:
        policy.addresses(host, port)
    except Unresolvable as exc:
        return str(exc)
    return None
