"""The source model and the one interface every kind implements."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agent.net.address_policy import AddressPolicy, Resolver, system_resolver
from agent.retrieval.ingest import FileResult, IngestItem, Status

Checkpoint = dict[str, Any]
"""What a kind remembers between syncs (a commit, per-page ETags): JSON, kind-specific."""

Item = IngestItem | FileResult
"""A document to ingest, or a result the kind already knows (unchanged, skipped, failed)."""

_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,127}$")
_INTERVAL = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd]?)$")
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


class SourceError(Exception):
    """A whole source cannot be synced now (server down, bad token); the message says why
    and, where there is one, the fix. Its documents keep their previous version."""


@dataclass(frozen=True)
class SourceSpec:
    """A source as the user added it. ``options`` never hold a secret, only the names of
    the environment variables that do (``token_env``). ``allow_private``: the source may
    reach private and local addresses (an intranet wiki); off unless the user said so."""

    name: str
    kind: str
    target: str
    scope: str
    every_s: float  # 0: only on `teamrag sync`
    options: Mapping[str, Any] = field(default_factory=dict)
    allow_private: bool = False

    def option(self, key: str, default: Any = None) -> Any:
        return self.options.get(key, default)


@dataclass(frozen=True)
class KindContext:
    """What a kind may use besides its spec: the environment (for secrets), a folder of
    its own (a Git clone), the time limit of one request, and how host names are
    resolved for the address policy (injectable: tests resolve without DNS)."""

    env: Mapping[str, str]
    work_dir: Path
    timeout_s: float = 30.0
    resolver: Resolver = system_resolver
    one_off: bool = False  # `teamrag ingest URL`, not a stored source

    def policy(self, spec: SourceSpec) -> AddressPolicy:
        """The address policy for ``spec``'s fetches; a refusal names its opt-in."""
        if self.one_off:
            opt_in = "pass --allow-private to `teamrag ingest`"
        else:
            opt_in = (
                f"add the source with --allow-private (`teamrag sources remove {spec.name}`, "
                f"then `teamrag sources add {spec.kind} {spec.target} --allow-private`)"
            )
        return AddressPolicy(spec.allow_private, self.resolver, opt_in)

    def secret(self, spec: SourceSpec, option: str, what: str) -> str:
        """The secret in the environment variable named by ``option`` (e.g. token_env)."""
        name = spec.option(option)
        flag = "--" + option.replace("_", "-")
        if not name:
            raise SourceError(
                f"source {spec.name!r} needs {what}: pass {flag} NAME when adding it, "
                "naming an environment variable that holds it"
            )
        value = self.env.get(str(name), "")
        if not value:
            raise SourceError(
                f"{name} is not set: export it (the {what} of source {spec.name!r}) or pass "
                f"{flag} NAME to use another variable"
            )
        return value


class SourceKind(Protocol):
    """One kind of source. After a scan (``load_all`` or ``changed_since``, consumed to
    the end) ``existing`` and ``checkpoint`` describe that scan."""

    def load_all(self) -> Iterator[Item]:
        """Every document of the source."""
        ...

    def changed_since(self, checkpoint: Checkpoint) -> Iterator[Item]:
        """The documents that changed since ``checkpoint``; the others may come back as
        "unchanged" results or not at all."""
        ...

    def existing(self) -> set[str]:
        """The catalog keys of every document that still exists (changed or not): the
        source's other documents are deleted."""
        ...

    def checkpoint(self) -> Checkpoint:
        """What the next ``changed_since`` starts from."""
        ...

    def close(self) -> None: ...


def validate_name(name: str) -> str:
    if not _NAME.match(name):
        raise ValueError(
            f"invalid source name {name!r}: use 1-64 lowercase letters, digits, '.', '_' or '-'"
        )
    return name


def validate_env_name(option: str, value: str) -> str:
    """Options ending in ``_env`` name a variable; a value that looks like a secret itself
    is refused so that it never lands in the catalog in clear text."""
    if not _ENV_NAME.match(value):
        raise ValueError(
            f"--{option.replace('_', '-')} takes the NAME of an environment variable (e.g. "
            f"CONFLUENCE_TOKEN), not {'the secret itself' if len(value) > 20 else repr(value)}"
        )
    return value


def parse_interval(text: str) -> float:
    """``30m`` -> 1800.0; ``0`` or ``off`` -> 0 (sync only when asked)."""
    cleaned = text.strip().lower()
    if cleaned in ("off", "never", "manual"):
        return 0.0
    match = _INTERVAL.match(cleaned)
    if not match:
        raise ValueError(
            f"invalid interval {text!r}: use a number and a unit, e.g. 90s, 30m, 6h or 1d "
            "(or 'off' to sync only with `teamrag sync`)"
        )
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if 0 < seconds < 60:
        raise ValueError(f"interval {text!r} is under a minute; use 1m or more")
    return seconds


def format_interval(seconds: float) -> str:
    if seconds <= 0:
        return "off"
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def skipped(source: str, reason: str) -> FileResult:
    return FileResult(source, Status.IGNORED, reason=reason)


def failed(source: str, reason: str) -> FileResult:
    return FileResult(source, Status.FAILED, reason=reason)


def unchanged(source: str) -> FileResult:
    return FileResult(source, Status.UNCHANGED)


def item(
    source: str, name: str, data: bytes, *, link: str | None = None, title: str | None = None,
    scope: str | None = None,
) -> IngestItem:  # fmt: skip
    return IngestItem(source, name, lambda: data, scope=scope, title=title, link=link)
