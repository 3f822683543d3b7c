"""Where sources may fetch from: the address policy and the same-site redirect rule on
real local sites. Two loopback servers on two ports are two sites; a server that must
not be reached counts its requests, and the test asserts it saw none."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from agent.retrieval.knowledge_base import KnowledgeBase
from agent.sources.base import SourceSpec
from agent.sources.store import SourceStore, SqliteSourceStore, local_sources
from agent.sources.store_postgres import PostgresSourceStore
from tests.fakes.web_site import FakeSite, html_page
from tests.support.sources_support import add, found, reasons, source_sync

SECRET = "The internal admin token is ZEPHYR-9."


def _site(**pages: bytes) -> FakeSite:
    site = FakeSite(robots="User-agent: *\nAllow: /\n")
    for path, body in pages.items():
        site.set_page("/" + path.replace("_", "."), body)
    return site.start()


@pytest.fixture
def inside() -> Iterator[FakeSite]:
    """The 'internal' site: another port, so another site, that nothing may reach."""
    site = _site(internal_html=html_page("Admin", SECRET))
    yield site
    site.stop()


@pytest.fixture
def public() -> Iterator[FakeSite]:
    site = _site()
    site.set_page("/", html_page("Handbook", "Start here.", ["/go", "/old"]))
    site.set_page("/deploy.html", html_page("Deploys", "Deploys run through CORVINA."))
    yield site
    site.stop()


def test_a_crawl_follows_redirects_only_within_the_site(
    kb: KnowledgeBase, tmp_path: Path, public: FakeSite, inside: FakeSite
) -> None:
    public.redirects["/go"] = inside.url + "/internal.html"
    public.redirects["/old"] = "/deploy.html"
    with source_sync(kb, tmp_path) as sync:
        add(sync, "handbook", "web", public.url + "/", allow_private=True)
        outcome = sync.sync("handbook")
    assert outcome.ok, outcome.error
    assert sum(inside.requests.values()) == 0  # never fetched
    assert (
        "redirects to " + inside.url + "/internal.html, another site; not followed"
        in (reasons(outcome)[public.url + "/go"])
    )
    assert "ZEPHYR-9" not in found(kb, "internal admin token")
    assert public.url + "/old" in found(kb, "CORVINA deploys")  # same site: followed


def test_a_start_page_or_sitemap_entry_redirecting_elsewhere_is_not_fetched(
    kb: KnowledgeBase, tmp_path: Path, public: FakeSite, inside: FakeSite
) -> None:
    public.set_page("/moved.html", html_page("Moved", "moved"))
    public.redirects["/moved.html"] = inside.url + "/internal.html"
    with source_sync(kb, tmp_path) as sync:
        add(sync, "map", "web", public.url + "/sitemap.xml", allow_private=True)
        mapped = sync.sync("map")
        public.redirects["/"] = inside.url + "/internal.html"
        add(sync, "start", "web", public.url + "/", allow_private=True)
        started = sync.sync("start")
    assert mapped.ok, mapped.error
    assert "another site; not followed" in reasons(mapped)[public.url + "/moved.html"]
    assert started.error is not None and "another site; not followed" in started.error
    assert sum(inside.requests.values()) == 0
    assert "ZEPHYR-9" not in found(kb, "internal admin token")


def test_without_the_opt_in_a_source_reaches_no_local_address(
    kb: KnowledgeBase, tmp_path: Path, inside: FakeSite
) -> None:
    port = inside.url.rsplit(":", 1)[1]
    with source_sync(kb, tmp_path) as sync:
        add(sync, "direct", "web", inside.url + "/internal.html")
        add(sync, "named", "web", f"http://localhost:{port}/internal.html", depth=0)
        add(sync, "decimal", "web", f"http://2130706433:{port}/internal.html")
        outcomes = [sync.sync(name) for name in ("direct", "named", "decimal")]
    for outcome in outcomes:
        assert outcome.error is not None and "loopback" in outcome.error, outcome.error
        assert "teamrag sources add web" in outcome.error
        assert "--allow-private" in outcome.error
    assert sum(inside.requests.values()) == 0  # not even robots.txt


def test_an_api_base_url_is_checked_through_the_injected_resolver(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    """A Confluence on a name that resolves to a private address: refused before any
    connection (the stub resolver is the only lookup; nothing leaves the machine)."""
    asked: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return ["10.20.30.40"]

    env = {"WIKI_TOKEN": "t0ken"}
    with source_sync(kb, tmp_path, env=env, resolver=resolver) as sync:
        add(sync, "wiki", "confluence", "ENG", api_url="https://wiki.corp.example/wiki",
            token_env="WIKI_TOKEN")  # fmt: skip
        outcome = sync.sync("wiki")
    assert outcome.error is not None
    assert "wiki.corp.example (10.20.30.40): a private-network address" in outcome.error
    assert "--allow-private" in outcome.error and asked == ["wiki.corp.example"]


def test_git_over_http_is_checked_before_git_runs(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_git(*args: Any, **kwargs: Any) -> Any:
        pytest.fail(f"git ran: {args}")

    monkeypatch.setattr(subprocess, "run", no_git)
    with source_sync(kb, tmp_path) as sync:
        add(sync, "repo", "git", "http://127.0.0.1:9/team/handbook.git")
        add(sync, "ssh", "git", "git@[::1]:team/handbook.git")
        outcomes = [sync.sync("repo"), sync.sync("ssh")]
    for outcome in outcomes:
        assert outcome.error is not None and "loopback" in outcome.error
        assert "--allow-private" in outcome.error


def test_git_never_follows_a_redirect(
    kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git connects by itself, so the address of a redirect would go unchecked."""
    repo = tmp_path / "handbook"
    repo.mkdir()
    real = subprocess.run
    for command in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-qm", "one"]):
        (repo / "README.md").write_text("# Handbook\n\nOn-call rotates weekly.\n")
        real(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *command],
             check=True)  # fmt: skip
    commands: list[list[str]] = []

    def recording(command: list[str], **kwargs: Any) -> Any:
        commands.append(command)
        return real(command, **kwargs)

    monkeypatch.setattr(subprocess, "run", recording)
    with source_sync(kb, tmp_path) as sync:
        add(sync, "handbook", "git", str(repo))  # a local path needs no opt-in
        outcome = sync.sync("handbook")
    assert outcome.ok, outcome.error
    assert commands and all(c[1:3] == ["-c", "http.followRedirects=false"] for c in commands)


# The sources table as it was before the address policy (no allow_private column).
_OLD_TABLE = (
    "CREATE TABLE sources (name TEXT PRIMARY KEY, kind TEXT NOT NULL, target TEXT NOT NULL, "
    "scope TEXT NOT NULL, every_s {real} NOT NULL, options TEXT NOT NULL, created_at {real} "
    "NOT NULL, last_sync {real}, last_ok {real}, last_error TEXT, failures INTEGER NOT NULL "
    "DEFAULT 0, next_run {real} NOT NULL, documents INTEGER NOT NULL DEFAULT 0, checkpoint "
    "TEXT NOT NULL DEFAULT '{{}}', basis TEXT NOT NULL DEFAULT '')"
)
_OLD_ROW = (
    "INSERT INTO sources (name, kind, target, scope, every_s, options, created_at, next_run) "
    "VALUES ('old', 'web', 'http://10.0.0.5/', 'eng', 0, '{}', 1, 1)"
)


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_sources_from_before_the_opt_in_keep_the_rule(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    store: SourceStore
    if backend == "sqlite":
        catalog = tmp_path / "data" / "catalog.sqlite3"
        catalog.parent.mkdir(parents=True)
        with contextlib.closing(sqlite3.connect(catalog)) as lite, lite:
            lite.execute(_OLD_TABLE.format(real="REAL"))
            lite.execute(_OLD_ROW)
        assert [s.allow_private for s in local_sources(catalog)] == [False]  # read only
        store = SqliteSourceStore(catalog)
    else:
        url, schema = request.getfixturevalue("postgres_schema")
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
            db.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            db.execute(_OLD_TABLE.format(real="DOUBLE PRECISION"))
            db.execute(_OLD_ROW)
        store = PostgresSourceStore(url, schema)
    try:
        store.add(SourceSpec("wiki", "web", "http://wiki.corp/", "eng", 0, {}, True))
        allowed = {s.spec.name: s.spec.allow_private for s in store.all()}
    finally:
        store.close()
    assert allowed == {"old": False, "wiki": True}
