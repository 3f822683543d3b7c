"""The team deployment's world for the multi-worker tests: two ``teamrag slack`` worker
processes, each with an empty data folder of its own, sharing only a real Redis,
Postgres and Chroma server, and the helpers their tests ask and read with.

One pair of workers serves each test module that uses ``world`` (starting one loads the
encoder and the graph); a test that kills a worker leaves the next test to start it
again. Every test works in a workspace of its own, so no answer comes from another
test's cache, and a worker's log is in every failure message.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator

import psycopg
import pytest
import redis

from agent.retrieval.embeddings import UniversalSentenceEncoder
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack
from tests.support.redis_support import RedisServer
from tests.support.servers import chroma_server
from tests.support.team_support import CLAIM_S, DOCS, LIMIT, REDIS_DB, World
from tests.support.workers_support import (
    Team,
    ingest,
    postgres_or_skip,
    slack_id,
    worker_env,
    write_docs,
)


@pytest.fixture(scope="module")
async def world(
    tmp_path_factory: pytest.TempPathFactory,
    embedder: UniversalSentenceEncoder,
    redis_server: RedisServer,
    fake_llm_server: FakeOpenAI,
) -> AsyncIterator[World]:
    folder = tmp_path_factory.mktemp("team")
    if redis_server.process is None:
        redis_server.start()
    redis_url = f"redis://127.0.0.1:{redis_server.port}/{REDIS_DB}"
    redis.Redis.from_url(redis_url).flushdb()
    database_url = postgres_or_skip()
    schema = f"t_{uuid.uuid4().hex[:12]}"  # the shared catalog of this run
    general, alpha, beta = slack_id("C"), slack_id("C"), slack_id("C")
    channels = f'[channels.{alpha}]\nscopes = ["alpha"]\n[channels.{beta}]\nscopes = ["beta"]\n'
    slack = FakeSlack().start()
    try:
        with chroma_server(folder / "chroma") as chroma_url:
            docs = write_docs(folder / "docs", DOCS)
            # Through a host of its own: the workers' data folders stay empty of documents.
            ingest(folder / "ingesting-host", chroma_url, embedder, docs,
                   database_url=database_url, schema=schema)  # fmt: skip
            env = worker_env(
                redis_url=redis_url,
                chroma_url=chroma_url,
                slack=slack,
                llm=fake_llm_server,
                database_url=database_url,
                queue_claim_s=CLAIM_S,
                rate_limit_per_minute=LIMIT,
                redis_retry_s=0.5,
                channels=channels,
                chat_update_interval_s=0.05,
                default_scope="public",
                catalog_schema=schema,
            )
            team = await Team.start(slack, env, folder / "workers")
            try:
                yield World(team, slack, redis_url, general, alpha, beta)
            finally:
                await team.close()
    finally:
        slack.stop()
        with psycopg.connect(database_url, autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
async def team(world: World, fake_llm: FakeOpenAI, redis_server: RedisServer) -> Team:
    """Both workers running (again, after a test killed one), a clean fake Slack."""
    if redis_server.process is None:
        redis_server.start()
    world.slack.reset()
    await world.team.ensure_up()
    return world.team
