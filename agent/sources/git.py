"""The ``git`` kind: the documentation files of a Git repository (URL or local path).

A bare clone lives in the source's work folder; each sync fetches and reads one
commit of the branch. Incremental by commit: ``git diff`` between the checkpoint's
commit and the new one names the files to reload; a force-push that dropped the old
commit falls back to a full load. The git CLI does the work (no library to pin).
Citations link to the file and its line range on GitHub or GitLab when the host is
known (or ``--web-url`` names it). A repository over http(s) passes the address policy
(agent/net/address_policy.py) before git runs; git connects by itself, so its address
cannot be pinned, and redirects are refused (``http.followRedirects=false``) so the
server cannot send it to an address that was not checked. Local paths and ``file://``
need no network and stay allowed.
"""

from __future__ import annotations

import fnmatch
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from agent.net.address_policy import AddressRefused, Unresolvable
from agent.retrieval.ingest import IngestItem
from agent.retrieval.loaders import git_globs
from agent.sources.base import (
    Checkpoint,
    Item,
    KindContext,
    SourceError,
    SourceSpec,
    skipped,
)
from agent.sources.code_comments import CODE_GLOBS, comments_text
from agent.sources.http import DEFAULT_MAX_BYTES

# Every documentation format teamrag reads (agent/retrieval/loaders: FILE_TYPES);
# ``--include`` replaces the list (CSV and HTML files in a repository are usually data).
DEFAULT_GLOBS = git_globs()
# Files whose lines a citation can link to (the rest are binary: PDF, Office, HWP).
_LINED = ("*.md", "*.markdown", "*.rst", "*.txt", "*.text")
_HOSTED = re.compile(
    r"^(?:https?://|git@|ssh://git@)(github\.com|gitlab\.com)[:/](.+?)(?:\.git)?/?$"
)


def web_base(target: str, override: str | None) -> str | None:
    """The repository's web page, for citation links: GitHub/GitLab, or ``--web-url``."""
    if override:
        return override.rstrip("/")
    match = _HOSTED.match(target)
    return f"https://{match.group(1)}/{match.group(2)}" if match else None


def line_link(base: str, commit: str, path: str, first: int, last: int) -> str:
    if "gitlab" in base:
        return f"{base}/-/blob/{commit}/{path}#L{first}-{last}"
    return f"{base}/blob/{commit}/{path}#L{first}-L{last}"


def line_range(file_lines: list[str], chunk: str) -> tuple[int, int] | None:
    """1-based lines of ``file_lines`` a chunk came from (loaders drop heading marks, so
    the chunk's first line is looked for inside the file's lines)."""
    lines = [line.strip() for line in chunk.splitlines() if line.strip()]
    if not lines:
        return None
    head = lines[0][:80]
    for number, line in enumerate(file_lines, 1):
        if head and head in line:
            return number, number + max(0, len(chunk.splitlines()) - 1)
    return None


_SCP_LIKE = re.compile(r"^(?:[\w.-]+@)?(\[[^\]]+\]|[\w.-]+):(?!//)")
_PORTS = {"http": 80, "https": 443, "ssh": 22, "git": 9418}


def remote_host(target: str) -> tuple[str, int]:
    """The server a Git target reaches, and its port; ``("", 0)`` for a local one."""
    parts = urlsplit(target)
    if parts.scheme in _PORTS:
        return parts.hostname or "", parts.port or _PORTS[parts.scheme]
    if parts.scheme or Path(target).expanduser().exists():
        return "", 0  # file://, or a local path
    match = _SCP_LIKE.match(target)  # git@host:team/repo.git
    return (match.group(1).strip("[]"), 22) if match else ("", 0)


class GitSource:
    def __init__(self, spec: SourceSpec, ctx: KindContext) -> None:
        self.spec = spec
        self.target = spec.target
        local = Path(spec.target).expanduser()
        if local.exists():
            self.target = str(local.resolve())
        self.repo = ctx.work_dir / "repo.git"
        self.branch: str | None = spec.option("branch")
        self.code_comments = bool(spec.option("code_comments", False))
        globs = list(spec.option("include") or DEFAULT_GLOBS)
        self.globs = globs + (list(CODE_GLOBS) if self.code_comments else [])
        self.limit = int(spec.option("max_bytes", DEFAULT_MAX_BYTES))
        self.web = web_base(spec.target, spec.option("web_url"))
        self.policy = ctx.policy(spec)
        self._commit = ""
        self._existing: set[str] = set()

    # -- the interface -----------------------------------------------------
    def load_all(self) -> Iterator[Item]:
        commit = self._update()
        files = self._files(commit)
        yield from self._items(commit, files)

    def changed_since(self, checkpoint: Checkpoint) -> Iterator[Item]:
        old = str(checkpoint.get("commit", ""))
        commit = self._update()
        files = self._files(commit)
        if old == commit:
            return
        if not old or not self._has(old):
            yield from self._items(commit, files)  # history rewritten: read everything
            return
        diff = self._git("diff", "--name-only", "-z", "--no-renames", old, commit)
        changed = {p for p in diff.decode().split("\0") if p}
        yield from self._items(commit, [p for p in files if p in changed])

    def existing(self) -> set[str]:
        return self._existing

    def checkpoint(self) -> Checkpoint:
        return {"commit": self._commit}

    def close(self) -> None:
        pass

    # -- git ------------------------------------------------------------------
    def _check_address(self) -> None:
        """Before git reaches a server (http(s), ssh, git://): its host must pass the policy."""
        host, port = remote_host(self.target)
        if not host:
            return  # a local path or file://: no network
        try:
            self.policy.addresses(host, port)
        except (AddressRefused, Unresolvable) as exc:
            raise SourceError(f"{self.target}: {exc}") from None

    def _git(self, *args: str, repo: bool = True) -> bytes:
        # No redirects: git connects by itself, so a redirect's address is never checked.
        command = ["git", "-c", "http.followRedirects=false",
                   *(["--git-dir", str(self.repo)] if repo else []), *args]  # fmt: skip
        env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
        try:
            done = subprocess.run(command, capture_output=True, env=env, timeout=600, check=False)
        except FileNotFoundError:
            raise SourceError(
                "git is not installed: install it (e.g. apt-get install git)"
            ) from None
        except subprocess.TimeoutExpired:
            raise SourceError(
                f"`git {args[0]}` took over 10 minutes; is {self.target} reachable?"
            ) from None
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise SourceError(
                f"git {args[0]} failed for {self.target}: {message[-1] if message else '?'}"
            )
        return done.stdout

    def _update(self) -> str:
        self._check_address()
        if not (self.repo / "HEAD").exists():
            self.repo.parent.mkdir(parents=True, exist_ok=True)
            self._git("clone", "--bare", "--quiet", self.target, str(self.repo), repo=False)
        else:
            self._git("fetch", "--quiet", "--prune", "origin", "+refs/heads/*:refs/heads/*")
        if not self.branch:
            head = self._git("symbolic-ref", "HEAD").decode().strip()
            self.branch = head.removeprefix("refs/heads/")
        try:
            self._commit = self._git("rev-parse", f"refs/heads/{self.branch}").decode().strip()
        except SourceError:
            raise SourceError(
                f"{self.target} has no branch {self.branch!r}; pass --branch with one it has"
            ) from None
        return self._commit

    def _has(self, commit: str) -> bool:
        try:
            self._git("cat-file", "-e", f"{commit}^{{commit}}")
        except SourceError:
            return False
        return True

    def _files(self, commit: str) -> list[str]:
        listing = self._git("ls-tree", "-r", "-z", "--name-only", commit).decode()
        files = [p for p in listing.split("\0") if p and self._wanted(p)]
        self._existing = {self._key(p) for p in files}
        return files

    def _wanted(self, path: str) -> bool:
        name = PurePosixPath(path).name
        return any(fnmatch.fnmatch(path, g) or fnmatch.fnmatch(name, g) for g in self.globs)

    def _key(self, path: str) -> str:
        if self.web:
            return line_link(self.web, self.branch or "HEAD", path, 0, 0).split("#")[0]
        return f"{self.target}#{self.branch}:{path}"

    def _items(self, commit: str, paths: list[str]) -> Iterator[Item]:
        with subprocess.Popen(
            ["git", "--git-dir", str(self.repo), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
        ) as batch:
            assert batch.stdin is not None and batch.stdout is not None
            for path in paths:
                batch.stdin.write(f"{commit}:{path}\n".encode())
                batch.stdin.flush()
                header = batch.stdout.readline().split()
                if len(header) < 3:
                    continue  # "missing": cannot happen for a path ls-tree listed
                data = batch.stdout.read(int(header[2]) + 1)[:-1]
                yield self._item(commit, path, data)
            batch.stdin.close()

    def _item(self, commit: str, path: str, data: bytes) -> Item:
        key = self._key(path)
        if len(data) > self.limit:
            return skipped(key, f"larger than {self.limit} bytes; raise --max-bytes to load it")
        name = PurePosixPath(path).name
        # Line numbers are the file's own, also for comments taken out of code.
        code = self.code_comments and not any(fnmatch.fnmatch(name, g) for g in DEFAULT_GLOBS)
        lined = code or any(fnmatch.fnmatch(name, g) for g in _LINED)
        text_lines = data.decode("utf-8", "replace").splitlines() if lined else []
        if code:
            data = comments_text(name, data).encode()
            name += ".txt"
        web = self.web

        def link_for(chunk: str) -> str | None:
            found = line_range(text_lines, chunk)
            if web is None or found is None:
                return None
            return line_link(web, commit, path, *found)

        link = line_link(web, commit, path, 1, 1).split("#")[0] if web else None
        return IngestItem(key, name, lambda: data, link=link, link_for=link_for)
