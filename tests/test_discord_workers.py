"""Two ``teamrag discord`` processes, one shard each, sharing a real Redis (the turn
queue), Postgres (or SQLite) and a Chroma server, against the fake Discord: a process
killed mid-answer loses nothing, because the other one finishes the answer through the
interaction's webhook (the deferred "thinking…" becomes the answer, once)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
import redis

from agent.retrieval.embeddings import UniversalSentenceEncoder
from tests.discord_support import has_feedback, loading, until
from tests.fakes.discord_payloads import TOKEN
from tests.fakes.discord_rest import FOLLOWUP, GLOBAL_COMMANDS, ORIGINAL
from tests.fakes.discord_server import GENERAL, GUILD_ID, FakeDiscord
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack
from tests.redis_support import RedisServer
from tests.servers import chroma_server, free_port
from tests.workers_support import (
    Worker,
    ingest,
    reachable_postgres,
    tagged_answers,
    worker_env,
    write_docs,
)

CLAIM_S = 2.0
REDIS_DB = 4  # apart from the team test's and the database other Redis tests flush
DOCS = {"public": {"handbook.md": "# Operations handbook\n\nPostgres backups are kept for "
                   "35 days. The nightly full backup runs at 03:00.\n"}}  # fmt: skip


@dataclass
class Shards:
    fake: FakeDiscord
    workers: list[Worker]
    redis_url: str

    def logs(self) -> str:
        return "\n".join(f"=== worker {w.name} ===\n{w.log(4000)}" for w in self.workers)


def own_shard(shard: int) -> dict[str, str]:
    return {"TEAMRAG_DISCORD_SHARD_IDS": f"[{shard}]", "TEAMRAG_OPS_PORT": str(free_port())}


@pytest.fixture
async def shards(
    tmp_path: Path,
    embedder: UniversalSentenceEncoder,
    redis_server: RedisServer,
    fake_llm: FakeOpenAI,
) -> AsyncIterator[Shards]:
    if redis_server.process is None:
        redis_server.start()
    redis_url = f"redis://127.0.0.1:{redis_server.port}/{REDIS_DB}"
    redis.Redis.from_url(redis_url).flushdb()
    database_url = reachable_postgres()
    schema = f"t_{uuid.uuid4().hex[:12]}"
    fake = FakeDiscord().start()
    unused_slack = FakeSlack()  # worker_env names a Slack; these workers never call it
    try:
        with chroma_server(tmp_path / "chroma") as chroma_url:
            docs = write_docs(tmp_path / "docs", DOCS)
            ingest(tmp_path / "data", chroma_url, embedder, docs, database_url=database_url,
                   schema=schema)  # fmt: skip
            env = worker_env(
                data_dir=tmp_path / "data",
                redis_url=redis_url,
                chroma_url=chroma_url,
                slack=unused_slack,
                llm=fake_llm,
                database_url=database_url,
                queue_claim_s=CLAIM_S,
                chat_update_interval_s=0.05,
                catalog_schema=schema,
                discord_shard_count=2,
            ) | {
                "DISCORD_TOKEN": TOKEN,
                "DISCORD_API_BASE": fake.api_base,
                "DISCORD_GATEWAY_URL": fake.gateway_url,
            }
            workers = [
                Worker(str(shard), env | own_shard(shard), tmp_path / "workers",
                       command=("discord",))
                for shard in (0, 1)
            ]  # fmt: skip
            for worker in workers:
                worker.start()
            team = Shards(fake, workers, redis_url)
            try:
                await until(
                    lambda: (
                        (fake.gateway.ready_shards() == {0, 1} and fake.calls_to(GLOBAL_COMMANDS))
                        or not all(w.alive for w in workers)
                    ),
                    f"both shards to connect\n{team.logs()}",
                    timeout=120,
                )
                assert all(w.alive for w in workers), team.logs()
                yield team
            finally:
                for worker in workers:
                    worker.stop()
    finally:
        fake.stop()
        if database_url:
            with psycopg.connect(database_url, autocommit=True) as db:
                db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


async def test_a_shard_process_killed_mid_answer_loses_nothing(
    shards: Shards, fake_llm: FakeOpenAI
) -> None:
    tagged_answers(fake_llm)
    fake_llm.latency_s = 1.0  # three round trips: the answer is under way for seconds
    fake = shards.fake
    interaction = await fake.slash("How long are backups kept? #dkill-1")
    # Whichever process read the question from the queue logs its steps with the thread id.
    bound = f"[thread=discord:{GUILD_ID}:{GENERAL}:{interaction} "
    victim = await until(
        lambda: next((w for w in shards.workers if bound in w.log(0)), None),
        f"a process to start answering\n{shards.logs()}",
    )
    # Killed once its progress shows in the deferred response.
    await until(lambda: fake.calls_to(ORIGINAL), f"the first progress\n{shards.logs()}")
    (survivor,) = [w for w in shards.workers if w is not victim]
    victim.kill()
    await until(
        lambda: has_feedback(fake.original(interaction)),
        f"the survivor to finish the answer\n{shards.logs()}",
        timeout=60,
    )
    original = fake.original(interaction)
    assert original is not None and not loading(original)
    assert "#dkill-1: Backups are kept for 35 days" in original["content"], original
    assert "taking over turn" in survivor.log(0), survivor.log()
    # Once: no followup, and nothing in the channel but the response (no fallback post).
    assert not fake.calls_to(FOLLOWUP), shards.logs()
    assert [m["id"] for m in fake.bot_messages(GENERAL)] == [original["id"]], shards.logs()
    client = redis.Redis.from_url(shards.redis_url)
    try:
        for stream in client.scan_iter(match="*queue:discord", _type="stream"):
            await until(
                lambda stream=stream: all(g["pending"] == 0 for g in client.xinfo_groups(stream)),
                f"the queue entry to be finished\n{shards.logs()}",
            )
    finally:
        client.close()
