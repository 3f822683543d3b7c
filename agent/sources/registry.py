"""The kinds a process knows, by name.

``agent/`` registers the kinds that need nothing but HTTP or Git (web, git,
confluence, notion, gdrive); ``bots/`` adds the Slack and Discord history kinds,
which live in ``adapters/`` because they use the platform clients.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agent.sources.base import KindContext, SourceKind, SourceSpec, validate_env_name

KindFactory = Callable[[SourceSpec, KindContext], SourceKind]


@dataclass(frozen=True)
class KindInfo:
    name: str
    summary: str
    build: KindFactory
    options: Mapping[str, str]  # option name -> what it does (for errors and docs)


class KindRegistry:
    def __init__(self) -> None:
        self._kinds: dict[str, KindInfo] = {}

    def register(self, info: KindInfo) -> None:
        self._kinds[info.name] = info

    def names(self) -> list[str]:
        return sorted(self._kinds)

    def get(self, name: str) -> KindInfo:
        info = self._kinds.get(name)
        if info is None:
            raise ValueError(
                f"unknown source kind {name!r}; known kinds: {', '.join(self.names())}"
            )
        return info

    def check_options(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        """The options, checked against what ``kind`` takes; secrets only by variable name."""
        info = self.get(kind)
        checked: dict[str, Any] = {}
        for key, value in options.items():
            if value is None or value == [] or value is False:
                continue
            if key not in info.options:
                known = ", ".join("--" + k.replace("_", "-") for k in sorted(info.options))
                raise ValueError(
                    f"{kind} sources take no --{key.replace('_', '-')}; they take: "
                    f"{known or 'no options'}"
                )
            if key.endswith("_env"):
                validate_env_name(key, str(value))
            checked[key] = value
        return checked


def _web(spec: SourceSpec, ctx: KindContext) -> SourceKind:
    from agent.sources.web import WebSource

    return WebSource(spec, ctx)


def _git(spec: SourceSpec, ctx: KindContext) -> SourceKind:
    from agent.sources.git import GitSource

    return GitSource(spec, ctx)


def _confluence(spec: SourceSpec, ctx: KindContext) -> SourceKind:
    from agent.sources.confluence import ConfluenceSource

    return ConfluenceSource(spec, ctx)


def _notion(spec: SourceSpec, ctx: KindContext) -> SourceKind:
    from agent.sources.notion import NotionSource

    return NotionSource(spec, ctx)


def _gdrive(spec: SourceSpec, ctx: KindContext) -> SourceKind:
    from agent.sources.gdrive import DriveSource

    return DriveSource(spec, ctx)


HTTP_OPTIONS = {
    "max_bytes": "skip documents larger than this many bytes (default 5 MB)",
    "timeout_s": "seconds one request may take (default 30)",
}


def default_registry() -> KindRegistry:
    registry = KindRegistry()
    registry.register(
        KindInfo(
            "web",
            "a website from a start URL or a sitemap (same site, robots.txt respected)",
            _web,
            {
                "max_pages": "crawl at most this many pages (default 500)",
                "depth": "follow links this many clicks from the start page (default 3)",
                **HTTP_OPTIONS,
            },
        )
    )
    registry.register(
        KindInfo(
            "git",
            "a Git repository (URL or local path): Markdown, reST and text files",
            _git,
            {
                "branch": "branch to read (default: the remote's default branch)",
                "include": "glob of files to load, repeatable (default *.md, *.rst, *.txt)",
                "code_comments": "also load comments and docstrings of source files",
                "web_url": "repository page for citation links, when not GitHub/GitLab",
                "max_bytes": HTTP_OPTIONS["max_bytes"],
            },
        )
    )
    auth = {
        "token_env": "environment variable holding the API token",
        "api_url": "API base URL (default: the service's public API)",
        **HTTP_OPTIONS,
    }
    registry.register(
        KindInfo(
            "confluence",
            "a Confluence space (cloud or server) by space key",
            _confluence,
            {
                **auth,
                "api_url": "your Confluence site, e.g. https://your-team.atlassian.net/wiki",
                "user_env": "environment variable holding the account e-mail (Confluence "
                "Cloud); unset = the token is a server personal access token",
                "attachments": "also load the pages' attachments (pdf, docx, txt, md)",
            },
        )
    )
    registry.register(
        KindInfo("notion", "a Notion database or page tree, by id", _notion, dict(auth))
    )
    registry.register(
        KindInfo(
            "gdrive",
            "a Google Drive folder by id: Docs, Sheets (CSV), PDF and text files",
            _gdrive,
            dict(auth),
        )
    )
    return registry
