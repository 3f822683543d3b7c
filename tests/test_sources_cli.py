"""`teamrag sources add/list/remove`, `teamrag sync` and `teamrag ingest URL` as a user
runs them, against a local site."""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bots.cli import app
from tests.fakes.web_site import FakeSite, html_page

runner = CliRunner()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CHROMA_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "TEAMRAG_EMBEDDINGS",
                 "REDIS_URL", "DATABASE_URL"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEAMRAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TEAMRAG_EMBED_PROCESSES", "1")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def site() -> Iterator[FakeSite]:
    site = FakeSite()
    site.set_page("/", html_page("Wiki", "Start.", ["/vpn.html"]))
    site.set_page("/vpn.html", html_page("VPN", "The VPN gateway is called HERON-7."))
    site.start()
    yield site
    site.stop()


def test_add_list_sync_fail_and_remove(env: None, site: FakeSite) -> None:
    added = runner.invoke(app, ["sources", "add", "web", site.url + "/", "--name", "wiki",
                                "--every", "30m", "--depth", "1", "--allow-private"])  # fmt: skip
    assert added.exit_code == 0, added.output
    assert "Added source wiki" in added.output

    synced = runner.invoke(app, ["sync"])
    assert synced.exit_code == 0, synced.output
    assert "Sync summary" in synced.output and "ok" in synced.output

    listed = runner.invoke(app, ["sources", "list"])
    assert listed.exit_code == 0
    row = next(line for line in listed.output.splitlines() if "wiki" in line)
    assert "30m" in row and " 2 " in row and "in 30m" in row

    site.status["/"] = 500
    failed = runner.invoke(app, ["sync", "wiki"])
    assert failed.exit_code == 1
    assert "source wiki: HTTP 500" in failed.output
    assert "HTTP 500" in runner.invoke(app, ["sources", "list"]).output

    searched = runner.invoke(app, ["search", "VPN gateway name", "--json"])
    assert "HERON-7" in searched.output  # the failed sync kept the documents

    removed = runner.invoke(app, ["sources", "remove", "wiki"])
    assert removed.exit_code == 0 and "its 2 documents" in removed.output
    assert "HERON-7" not in runner.invoke(app, ["search", "VPN gateway name", "--json"]).output
    assert "No sources yet" in runner.invoke(app, ["sources", "list"]).output


def test_add_refuses_bad_input_with_the_fix(env: None, site: FakeSite) -> None:
    cases = [
        (["sources", "add", "web", "ftp://x"], "needs an http(s):// URL"),
        (["sources", "add", "web", site.url, "--branch", "main"], "web sources take no --branch"),
        (["sources", "add", "ftp", site.url], "unknown source kind 'ftp'"),
        (["sources", "add", "web", site.url, "--every", "soon"], "invalid interval 'soon'"),
        (["sources", "add", "web", site.url, "--scope", "a", "--scope", "b"], "one scope"),
        (["sync", "nope"], "no source named nope"),
        (["sources", "remove", "nope"], "no source named 'nope'"),
    ]
    for args, message in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output, (args, result.output)
    runner.invoke(app, ["sources", "add", "web", site.url, "--name", "w", "--allow-private"])
    again = runner.invoke(
        app, ["sources", "add", "web", site.url, "--name", "w", "--allow-private"]
    )
    assert again.exit_code == 2 and "exists" in again.output


def test_ingest_accepts_a_url_once(env: None, site: FakeSite, tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_text("# Lunch\n\nLunch is served at noon in the atrium.\n")
    result = runner.invoke(app, ["ingest", str(note), site.url + "/vpn.html", "--allow-private"])
    assert result.exit_code == 0, result.output
    searched = runner.invoke(app, ["search", "VPN gateway name", "--json"])
    assert "HERON-7" in searched.output and f"{site.url}/vpn.html" in searched.output
    assert site.requests["/"] == 0  # one page, no crawl
    broken = runner.invoke(app, ["ingest", "http://127.0.0.1:9/nothing.html", "--allow-private"])
    assert broken.exit_code == 1 and "cannot connect" in broken.output


def test_sync_leaves_a_source_another_process_is_syncing(
    env: None, site: FakeSite, tmp_path: Path
) -> None:
    private = "--allow-private"
    runner.invoke(app, ["sources", "add", "web", site.url + "/", "--name", "wiki", private])
    runner.invoke(app, ["sources", "add", "web", site.url + "/vpn.html", "--name", "vpn", private])
    # The lock a bot's scheduler takes (bots/sources_wiring.sync_lock, without Redis).
    (tmp_path / "data" / "locks").mkdir(parents=True, exist_ok=True)
    with open(tmp_path / "data" / "locks" / "source-wiki.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        busy = runner.invoke(app, ["sync"])
        site.status["/vpn.html"] = 500
        both = runner.invoke(app, ["sync"])
    assert busy.exit_code == 75, busy.output
    assert "source wiki is being synced by another process" in busy.output
    assert "vpn" in busy.output and site.requests["/"] == 0
    assert both.exit_code == 1  # a failure says more than a busy source
    del site.status["/vpn.html"]
    assert runner.invoke(app, ["sync"]).exit_code == 0  # released: synced now


def test_add_slack_names_the_scope_and_warns_about_a_missing_token(
    env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
    added = runner.invoke(app, ["sources", "add", "slack", "C0123ABCD", "--every", "2h"])
    assert added.exit_code == 0, added.output
    assert "SLACK_BOT_TOKEN is not set" in added.output  # a warning: the bot may have it
    assert (
        "Added source slack-c0123abcd (slack C0123ABCD, scope from the channel rules; "
        "slack-c0123abcd if the channel is private), synced every 2h"
    ) in added.output
    chosen = runner.invoke(
        app, ["sources", "add", "discord", "42", "--scope", "eng", "--every", "off"]
    )
    assert chosen.exit_code == 0 and "scope eng" in chosen.output
    assert "synced only by `teamrag sync`" in chosen.output  # was "synced at every sync"


def test_local_addresses_need_the_opt_in_which_list_shows(env: None, site: FakeSite) -> None:
    refused = runner.invoke(app, ["sources", "add", "web", site.url + "/", "--name", "wiki"])
    assert refused.exit_code == 2, refused.output
    assert "loopback" in refused.output and "--allow-private" in refused.output
    once = runner.invoke(app, ["ingest", site.url + "/vpn.html"])
    assert once.exit_code == 1 and "pass --allow-private to `teamrag ingest`" in once.output
    assert sum(site.requests.values()) == 0  # refused before any connection
    allowed = runner.invoke(
        app, ["sources", "add", "web", site.url + "/", "--name", "wiki", "--allow-private"]
    )
    assert allowed.exit_code == 0, allowed.output
    runner.invoke(app, ["sources", "add", "slack", "C0123ABCD", "--name", "chat"])
    listed = runner.invoke(app, ["sources", "list"]).output
    assert "private" in listed
    rows = {line.split("│")[1].strip(): line for line in listed.splitlines() if "│" in line}
    assert "allowed" in rows["wiki"] and "allowed" not in rows["chat"]
