"""The one fixture that starts worker processes on several "hosts": each has an empty data
folder of its own and shares only a real Redis, Postgres and Chroma server with the others.

``tests/conftest.py`` offers it to every module; a module that uses it says what runs with
a module-scoped ``deployment_plan`` fixture (a :class:`Plan`): two ``teamrag slack``
workers, two ``teamrag discord`` processes (one shard each), or both.
``deployment`` starts them once per module (starting one loads the encoder and the
graph); ``hosts`` hands each test every process running again, after a test killed one,
and a clean fake Slack.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest
import redis

from tests.fakes.discord_server import FakeDiscord
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack
from tests.support.redis_support import RedisServer
from tests.support.servers import chroma_server
from tests.support.shards_support import Shards, discord_env
from tests.support.workers_support import (
    Team,
    Worker,
    ingest,
    ingest_command,
    postgres_or_skip,
    worker_env,
    write_docs,
)

CLAIM_S = 2.0  # a dead worker's turn is taken over after this long


@dataclass(frozen=True)
class Plan:
    """What a test module's deployment runs."""

    # Each plan's own Redis database, apart from the one the other Redis tests flush.
    redis_db: int
    # Ingested before the workers start, on a host of its own: {scope: {file name: text}}.
    docs: Mapping[str, Mapping[str, str]]
    slack_workers: bool = False  # two `teamrag slack` workers (a Team)
    discord_shards: bool = False  # two `teamrag discord` processes, one shard each
    # Ingest in this process with the session's encoder (quicker) instead of running the
    # real `teamrag ingest`; either way into the shared catalog and Chroma server.
    ingest_in_process: bool = False
    # More TEAMRAG_ settings for every worker, as :func:`worker_env` takes them.
    settings: Mapping[str, str | float | int] = field(default_factory=dict)


@dataclass
class Deployment:
    slack: FakeSlack  # every worker is given it; only Slack workers call it
    env: dict[str, str]  # what every host is given (the shared servers)
    redis_url: str
    ingesting_host: Path  # the data folder the documents were ingested with
    docs: Path  # the folder of the plan's documents, one folder per scope
    slack_team: Team | None = None
    discord_shards: Shards | None = None

    @property
    def team(self) -> Team:
        """The Slack workers."""
        assert self.slack_team is not None, "the plan starts no Slack workers"
        return self.slack_team

    @property
    def shards(self) -> Shards:
        """The Discord processes."""
        assert self.discord_shards is not None, "the plan starts no Discord processes"
        return self.discord_shards

    @property
    def workers(self) -> list[Worker]:
        team = self.slack_team.workers if self.slack_team else []
        shards = self.discord_shards.workers if self.discord_shards else []
        return [*team, *shards]

    def logs(self) -> str:
        """Every process's log tail, for assertion messages."""
        parts = [self.slack_team, self.discord_shards]
        return "\n".join(part.logs() for part in parts if part is not None)

    async def ensure_up(self) -> None:
        """Start (again) every process that is not running, and wait until all serve."""
        if self.discord_shards is not None:
            await self.discord_shards.ensure_up()
        if self.slack_team is not None:
            await self.slack_team.ensure_up()


@pytest.fixture(scope="module")
async def deployment(
    request: pytest.FixtureRequest,
    deployment_plan: Plan,
    tmp_path_factory: pytest.TempPathFactory,
    redis_server: RedisServer,
    fake_llm_server: FakeOpenAI,
) -> AsyncIterator[Deployment]:
    plan = deployment_plan
    folder = tmp_path_factory.mktemp("deployment")
    database_url = postgres_or_skip()
    if redis_server.process is None:
        redis_server.start()
    redis_url = f"redis://127.0.0.1:{redis_server.port}/{plan.redis_db}"
    redis.Redis.from_url(redis_url).flushdb()
    schema = f"t_{uuid.uuid4().hex[:12]}"  # the shared catalog of this module's run
    async with AsyncExitStack() as stack:
        stack.callback(drop_schema, database_url, schema)
        slack = FakeSlack().start()
        stack.callback(slack.stop)
        chroma_url = stack.enter_context(chroma_server(folder / "chroma"))
        env = worker_env(
            data_dir=None,  # each worker an empty one of its own
            redis_url=redis_url,
            chroma_url=chroma_url,
            slack=slack,
            llm=fake_llm_server,
            database_url=database_url,
            queue_claim_s=CLAIM_S,
            chat_update_interval_s=0.05,
            catalog_schema=schema,
            **plan.settings,
        )
        docs = write_docs(folder / "docs", plan.docs)
        # Through a host of its own: the workers' data folders stay empty of documents.
        ingesting = folder / "ingesting-host"
        if plan.ingest_in_process:
            embedder = request.getfixturevalue("embedder")
            ingest(ingesting, chroma_url, embedder, docs, database_url=database_url, schema=schema)
        else:
            ingest_command(env, ingesting, docs)
        deployed = Deployment(slack, env, redis_url, ingesting, folder / "docs")
        if plan.discord_shards:
            fake = FakeDiscord().start()
            stack.callback(fake.stop)
            shards = Shards.of(fake, discord_env(env, fake), folder / "discord", redis_url)
            stack.callback(shards.stop)
            await shards.ensure_up()
            deployed.discord_shards = shards
        if plan.slack_workers:
            team = await Team.start(slack, env, folder / "slack")
            stack.push_async_callback(team.close)
            deployed.slack_team = team
        yield deployed


@pytest.fixture
async def hosts(deployment: Deployment, redis_server: RedisServer) -> Deployment:
    """Every process running (again, after a test killed one or stopped Redis), a clean
    fake Slack."""
    if redis_server.process is None:
        redis_server.start()
    deployment.slack.reset()
    await deployment.ensure_up()
    return deployment


def drop_schema(database_url: str, schema: str) -> None:
    with psycopg.connect(database_url, autocommit=True) as db:
        db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
