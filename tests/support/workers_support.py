"""Several ``teamrag slack`` (or ``discord``) worker processes sharing Redis, Postgres and a
Chroma server, and nothing else.

This is the team deployment: each worker is the real command (``python -m bots slack
--port P``) in a process of its own, started from the same environment a compose file
would give it, and each is a host of its own: its data folder (``TEAMRAG_DATA_DIR``) is
an empty folder no other process uses. They share only ``REDIS_URL`` (queue, locks,
de-duplication, rate limit, cache, thread record), ``DATABASE_URL`` (thread memory, the
document catalog and so the keyword index) and ``CHROMA_URL`` (the vectors), and talk
to the fake Slack, Discord and OpenAI servers of the process that drives them.
Documents are ingested through yet another folder, the ingesting host's
(:func:`ingest`, or the real command: :func:`ingest_command`).

So these tests need a Postgres (:func:`postgres_or_skip`). A caller that names a
``data_dir`` in :func:`worker_env` gives every worker that one folder instead: one
machine, for a benchmark without Postgres.

A test or benchmark sends signed events to the worker of its choice
(:meth:`Team.sender`), kills one (:meth:`Worker.kill`: SIGKILL, as a crash) and
reads each worker's log (:meth:`Team.logs`), which failure messages should carry.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import redis

from agent.retrieval.catalog_postgres import PostgresCatalog
from agent.retrieval.embeddings import Embedder
from agent.retrieval.ingest import Ingestor
from agent.retrieval.knowledge_base import KnowledgeBase, collection_name
from agent.retrieval.vectors import VectorStore
from bots.slack_bot import EVENTS_PATH
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.slack_chat import Message
from tests.fakes.slack_server import BOT_TOKEN, FakeSlack
from tests.support.agent_support import analysis, request_text, review, verdict
from tests.support.postgres_support import PG_URL, postgres_reachable
from tests.support.postgres_support import postgres_or_skip as shared_postgres_or_skip
from tests.support.servers import free_port
from tests.support.slack_support import SECRET, SlackSender

REPO = Path(__file__).resolve().parents[2]
# The variables a worker must not inherit from the shell that runs the tests: each one
# would point a worker at something other than the parts this harness gives it.
_FOREIGN = ("SLACK_", "OPENAI_", "TEAMRAG_", "DISCORD_", "LANGSMITH_", "LANGCHAIN_", "TAVILY_")
_FOREIGN_NAMES = ("REDIS_URL", "DATABASE_URL", "CHROMA_URL")


def reachable_postgres(url: str = PG_URL) -> str | None:
    """``url`` when a Postgres answers there, else None (thread memory then stays in SQLite)."""
    return url if postgres_reachable(url) else None


def postgres_or_skip(url: str = PG_URL) -> str:
    """The Postgres the hosts share, or skip the test, saying why."""
    return shared_postgres_or_skip(
        url,
        needed_for="hosts with separate data folders share the document catalog only "
        "through Postgres",
    )


def slack_id(kind: str) -> str:
    """A Slack-style id (``C...``, ``U...``, ``T...``) no earlier run used: thread memory in
    Postgres outlives a test run, and a thread id seen before would bring its history."""
    return kind + uuid.uuid4().hex[:10].upper()


def write_docs(folder: Path, docs: Mapping[str, Mapping[str, str]]) -> dict[str, list[Path]]:
    """Write ``docs`` ({scope: {file name: text}}) under ``folder``; the folder of each scope."""
    written = {}
    for scope, files in docs.items():
        (folder / scope).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (folder / scope / name).write_text(text, encoding="utf-8")
        written[scope] = [folder / scope]
    return written


def ingest(
    data_dir: Path,
    chroma_url: str,
    embedder: Embedder,
    sources: Mapping[str, Sequence[Path]],
    *,
    database_url: str | None = None,
    schema: str = "teamrag",
) -> None:
    """Ingest ``sources`` ({scope: files or folders}) into the shared knowledge base: the
    catalog in Postgres (``schema``) when ``database_url`` is given, as the workers then
    read it (else in ``data_dir``), the vectors on the Chroma server."""
    vectors = VectorStore.remote(chroma_url, collection_name(embedder.name))
    catalog = PostgresCatalog(database_url, schema) if database_url else None
    kb = KnowledgeBase(data_dir, embedder, vectors, catalog=catalog)
    try:
        for scope, paths in sources.items():
            report = Ingestor(kb).run(list(paths), scope=scope)
            assert not report.failed, report.failed
    finally:
        kb.close()


def ingest_command(
    env: Mapping[str, str], data_dir: Path, sources: Mapping[str, Sequence[Path]]
) -> None:
    """Ingest ``sources`` ({scope: files or folders}) with the real ``teamrag ingest``, run
    as a host with the data folder ``data_dir`` and the shared servers of ``env`` (a
    :func:`worker_env`): what an operator does on any one host."""
    data_dir.mkdir(parents=True, exist_ok=True)
    for scope, paths in sources.items():
        done = subprocess.run(
            [sys.executable, "-m", "bots", "ingest", *map(str, paths), "--scope", scope],
            env={**env, "TEAMRAG_DATA_DIR": str(data_dir)},
            cwd=data_dir,  # no stray .env
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, f"teamrag ingest failed:\n{done.stdout}\n{done.stderr}"


def worker_env(
    *,
    data_dir: Path | None = None,
    redis_url: str,
    chroma_url: str,
    slack: FakeSlack,
    llm: FakeOpenAI | None,
    database_url: str | None,
    **settings: str | float | int,
) -> dict[str, str]:
    """The environment of every worker; ``settings`` are TEAMRAG_ names without the prefix
    (``queue_claim_s=2`` is ``TEAMRAG_QUEUE_CLAIM_S=2``). Without ``data_dir`` each
    worker gets an empty data folder of its own (:attr:`Worker.data_dir`)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(_FOREIGN) and k not in _FOREIGN_NAMES
    }
    env |= {
        "PYTHONPATH": str(REPO),
        "REDIS_URL": redis_url,
        "CHROMA_URL": chroma_url,
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": slack.base_url,
        "TEAMRAG_EMBED_PROCESSES": "1",
        # A loaded CI machine can take over 2 s for one Redis call: that is not the outage
        # these tests stop Redis for, and a worker on in-process state would break the
        # shared limits they check (seen once: the rate limit across workers).
        "TEAMRAG_REDIS_TIMEOUT_S": "15",
        "PYTHONFAULTHANDLER": "1",  # SIGABRT on a hung worker prints where it hangs
    }
    if data_dir is not None:
        env["TEAMRAG_DATA_DIR"] = str(data_dir)
    if database_url:
        env["DATABASE_URL"] = database_url
    if llm is not None:
        env |= {"OPENAI_BASE_URL": llm.base_url, "OPENAI_API_KEY": "test"}
        env |= {"TEAMRAG_LLM_MAX_RETRIES": "0", "TEAMRAG_LLM_TIMEOUT_S": "60"}
    env |= {f"TEAMRAG_{name.upper()}": str(value) for name, value in settings.items()}
    return env


@dataclass
class Worker:
    """One ``teamrag slack`` process (or another ``command``); its stdout and stderr go to
    ``log_path``."""

    name: str
    env: dict[str, str]
    folder: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    # The teamrag command it runs; empty: ``slack --port PORT``.
    command: tuple[str, ...] = ()

    @property
    def _slack(self) -> tuple[str, ...]:
        return ("slack", "--port", str(self.port))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{EVENTS_PATH}"

    @property
    def log_path(self) -> Path:
        return self.folder / f"worker-{self.name}.log"

    @property
    def data_dir(self) -> Path:
        """The worker's data folder: its own, empty at its first start (its host's disk),
        unless the environment names one for every worker."""
        shared = self.env.get("TEAMRAG_DATA_DIR")
        return Path(shared) if shared else self.folder / f"data-{self.name}"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.starts += 1
        with self.log_path.open("ab") as log:
            log.write(f"--- worker {self.name}, start {self.starts} ---\n".encode())
            self.process = subprocess.Popen(
                [sys.executable, "-m", "bots", *(self.command or self._slack)],
                env=self.env | {"TEAMRAG_DATA_DIR": str(self.data_dir)},
                cwd=self.folder,  # no stray .env
                stdout=log,
                stderr=subprocess.STDOUT,
            )

    async def serving(self, session: aiohttp.ClientSession, *, timeout: float = 120) -> None:
        """Wait until the worker answers HTTP (it has no other signal); fail if it ended."""
        sender = SlackSender(FakeSlack(), self.url, session)
        body = json.dumps({"type": "url_verification", "challenge": "up", "token": "x"})
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.alive:
                raise AssertionError(f"worker {self.name} stopped before serving:\n{self.log()}")
            try:
                if (await sender.post(body, "application/json"))[0] == 200:
                    return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.05)
        self.dump()
        raise AssertionError(f"worker {self.name} did not serve within {timeout} s:\n{self.log()}")

    def dump(self) -> None:
        """Make a hung worker write every thread's stack to its log, and end it."""
        if self.process is not None and self.alive:
            self.process.send_signal(signal.SIGABRT)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self) -> None:
        """SIGKILL, as a crash or an OOM kill: no drain, no goodbye to Redis."""
        if self.process is not None and self.alive:
            self.process.kill()
            self.process.wait(10)

    def stop(self, timeout: float = 60) -> int | None:
        """SIGTERM, as ``docker stop``; the exit code (None if it had not started)."""
        if self.process is None:
            return None
        if self.alive:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        return self.process.returncode

    def cpu_s(self) -> float | None:
        """CPU seconds (user + system) the running process has used so far (Linux)."""
        if self.process is None or not self.alive:
            return None
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def log(self, tail: int = 6000) -> str:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""
        return text[-tail:] if tail else text


@dataclass
class Team:
    """N workers on one shared environment, and a sender to each over one HTTP session."""

    slack: FakeSlack
    workers: list[Worker]
    session: aiohttp.ClientSession

    @classmethod
    async def start(
        cls, slack: FakeSlack, env: dict[str, str], folder: Path, *, size: int = 2
    ) -> Team:
        session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1000))
        team = cls(slack, [Worker(chr(ord("a") + i), env, folder) for i in range(size)], session)
        try:
            await team.ensure_up()
        except BaseException:
            await team.close()
            raise
        return team

    async def ensure_up(self) -> None:
        """Start (again) every worker that is not running, and wait until all serve."""
        for worker in self.workers:
            if not worker.alive:
                worker.start()
        await asyncio.gather(*(w.serving(self.session) for w in self.workers))

    def sender(self, index: int) -> SlackSender:
        return SlackSender(self.slack, self.workers[index].url, self.session)

    def logs(self, tail: int = 4000) -> str:
        """Every worker's log tail, for assertion messages."""
        return "\n".join(f"=== worker {w.name} ===\n{w.log(tail)}" for w in self.workers)

    def tracebacks(self) -> list[str]:
        return [w.name for w in self.workers if "Traceback" in w.log(0)]

    async def close(self) -> dict[str, int | None]:
        """SIGTERM every worker at once, as ``docker compose down`` does (each drains);
        their exit codes."""
        codes = await asyncio.to_thread(stop_all, self.workers)
        await self.session.close()
        return {w.name: code for w, code in zip(self.workers, codes, strict=True)}


def stop_all(workers: Sequence[Worker]) -> list[int | None]:
    """SIGTERM every worker process at once and wait for all; their exit codes, in order."""
    with ThreadPoolExecutor(max(len(workers), 1)) as pool:
        return list(pool.map(lambda worker: worker.stop(), workers))


# --- the fake LLM: answers that say which question they answer --------------------------

TAG = re.compile(r"#[A-Za-z0-9]+-\d+")


def tagged_answers(llm: FakeOpenAI, body_text: str = "Backups are kept for 35 days [1].") -> None:
    """Script knowledge turns that pass every check, each answer naming the tag
    (``#conv-1``) of the question it answers, so order and exactly-once can be read
    off the thread: a turn answered twice, or swapped, shows."""

    def answer(body: dict[str, Any]) -> Reply:
        question = request_text(body).rsplit("Question:", 1)[-1]
        tags = TAG.findall(question)
        return Reply(content=f"{tags[-1] if tags else '#none'}: {body_text}")

    llm.reply("Analysis", analysis())
    llm.reply("Review", review(0.9))
    llm.script["text"] = answer
    llm.reply("Verdict", verdict(True))


def tags_in(texts: list[str]) -> list[str]:
    return [m.group(0) for t in texts if (m := TAG.search(t))]


def noted_reply(redis_url: str, replies: list[Message]) -> str | None:
    """The ts of the one reply in a thread once a worker noted it with its queued turn."""
    if len(replies) != 1:
        return None
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        for key in client.scan_iter(match="*queue:slack:notes:*"):
            if client.hget(key, "reply_ts") == replies[0].ts:
                return replies[0].ts
    finally:
        client.close()
    return None
