"""The git kind against a repository the test builds with the git CLI: incremental by
commit, deletions, line links, Korean files, code comments and failures."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.sources.git import line_link, web_base
from tests.support.format_files import hwpx_bytes, xlsx_bytes
from tests.support.sources_support import add, counts, found, reasons, source_sync

WEB = "https://github.com/acme/handbook"


def git(cwd: Path, *args: str) -> str:
    env = {
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
        "HOME": str(cwd), "PATH": "/usr/bin:/bin:/usr/local/bin",
    }  # fmt: skip
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=True)
    return done.stdout.decode()


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, Path]:
    """A working copy and the bare repository it pushes to (the source's target)."""
    bare = tmp_path / "origin.git"
    work = tmp_path / "work"
    git(tmp_path, "init", "--bare", "-b", "main", str(bare))
    git(tmp_path, "clone", str(bare), str(work))
    git(work, "checkout", "-b", "main")
    (work / "docs").mkdir()
    (work / "docs" / "deploy.md").write_text(
        "# Deploys\n\nIntro line.\n\n## Pipeline\n\nDeploys run through the TANAGER pipeline.\n",
        encoding="utf-8",
    )
    (work / "docs" / "onboarding.md").write_text(
        "# 온보딩\n\n신입 사원은 첫 주에 보안 교육을 받고 노트북을 IT 데스크에서 수령합니다.\n",
        encoding="utf-8",
    )
    (work / "README.txt").write_text("The handbook repository of the ACME team.\n")
    (work / "app.py").write_text('"""Billing retries failed charges three times."""\nx = 1\n')
    (work / "logo.png").write_bytes(b"\x89PNG" + bytes(100))
    commit(work, "first")
    return work, bare


def commit(work: Path, message: str) -> None:
    git(work, "add", "-A")
    git(work, "commit", "-q", "-m", message)
    git(work, "push", "-q", "origin", "main")


def test_git_source_loads_docs_with_line_links(
    kb: KnowledgeBase, tmp_path: Path, repo: tuple[Path, Path]
) -> None:
    _, bare = repo
    with source_sync(kb, tmp_path) as sync:
        add(sync, "handbook", "git", str(bare), web_url=WEB)
        outcome = sync.sync("handbook")
    assert outcome.ok, outcome.error
    assert counts(outcome) == {"added": 3}
    hits = found(kb, "which pipeline do deploys run through")
    assert f"{WEB}/blob/" in hits and "/docs/deploy.md#L" in hits
    assert "온보딩" in found(kb, "신입 사원 보안 교육")
    assert "Billing" not in found(kb, "billing retries charges")  # code is not loaded by default


def test_git_source_reads_hancom_and_office_files_by_default(
    kb: KnowledgeBase, tmp_path: Path, repo: tuple[Path, Path]
) -> None:
    work, bare = repo
    (work / "docs" / "규정.hwpx").write_bytes(hwpx_bytes())
    (work / "docs" / "servers.xlsx").write_bytes(xlsx_bytes())
    (work / "docs" / "data.csv").write_text("a,b\n1,2\n")  # data, not docs: left out
    commit(work, "office files")
    with source_sync(kb, tmp_path) as sync:
        add(sync, "handbook", "git", str(bare), web_url=WEB)
        outcome = sync.sync("handbook")
    assert counts(outcome) == {"added": 5}, outcome.report.failed
    top = kb.search("비밀번호 길이 기준", SearchOptions(k=1))[0].chunk
    assert top.locator() == "section 1 > 보안 규정 > 계정"
    # A binary file links to the file, never to line numbers of its bytes.
    assert top.link is not None and top.link.startswith(f"{WEB}/blob/")
    assert top.link.endswith("/docs/규정.hwpx")
    assert "Leave" in found(kb, "sick leave days per year")


def test_git_resync_reads_only_the_changed_files_and_removes_deleted(
    kb: KnowledgeBase, tmp_path: Path, repo: tuple[Path, Path]
) -> None:
    work, bare = repo
    with source_sync(kb, tmp_path) as sync:
        add(sync, "handbook", "git", str(bare))
        sync.sync("handbook")
        same = sync.sync("handbook")
        assert counts(same) == {}  # same commit: nothing read at all
        (work / "docs" / "deploy.md").write_text("# Deploys\n\nDeploys use the EGRET pipeline.\n")
        (work / "README.txt").unlink()
        commit(work, "second")
        changed = sync.sync("handbook")
        state = sync.store.get("handbook")
    assert counts(changed) == {"updated": 1, "removed": 1}
    assert state is not None and state.documents == 2
    text = found(kb, "which pipeline do deploys use")
    assert "EGRET" in text and "TANAGER" not in text


def test_code_comments_are_optional(
    kb: KnowledgeBase, tmp_path: Path, repo: tuple[Path, Path]
) -> None:
    _, bare = repo
    with source_sync(kb, tmp_path) as sync:
        add(sync, "code", "git", str(bare), code_comments=True, include=["*.md"])
        outcome = sync.sync("code")
    assert counts(outcome) == {"added": 3}
    assert "Billing retries" in found(kb, "billing retries failed charges")


def test_a_missing_repository_or_branch_is_a_stated_failure(
    kb: KnowledgeBase, tmp_path: Path, repo: tuple[Path, Path]
) -> None:
    _, bare = repo
    with source_sync(kb, tmp_path) as sync:
        add(sync, "gone", "git", str(tmp_path / "nowhere.git"))
        add(sync, "branch", "git", str(bare), branch="release")
        gone = sync.sync("gone")
        branch = sync.sync("branch")
    assert not gone.ok and "git clone failed" in (gone.error or "")
    assert not branch.ok and "no branch 'release'" in (branch.error or "")


def test_large_files_are_skipped_with_a_reason(
    kb: KnowledgeBase, tmp_path: Path, repo: tuple[Path, Path]
) -> None:
    work, bare = repo
    (work / "docs" / "big.md").write_text("# Big\n\n" + "word " * 2000)
    commit(work, "big")
    with source_sync(kb, tmp_path) as sync:
        add(sync, "handbook", "git", str(bare), max_bytes=5000)
        outcome = sync.sync("handbook")
    assert any("larger than 5000 bytes" in r for r in reasons(outcome).values())


def test_web_links_for_github_and_gitlab() -> None:
    assert web_base("git@github.com:acme/handbook.git", None) == WEB
    assert web_base("https://gitlab.com/acme/docs.git", None) == "https://gitlab.com/acme/docs"
    assert web_base("/srv/repo.git", None) is None
    assert line_link(WEB, "abc", "a.md", 3, 9) == f"{WEB}/blob/abc/a.md#L3-L9"
    gitlab = line_link("https://gitlab.com/acme/docs", "abc", "a.md", 3, 9)
    assert gitlab == "https://gitlab.com/acme/docs/-/blob/abc/a.md#L3-9"
