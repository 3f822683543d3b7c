"""The team deployment's world for the multi-worker tests: two ``teamrag slack`` worker
processes started by ``tests/support/deployment.py`` (each with an empty data folder of
its own, sharing only a real Redis, Postgres and Chroma server), three channels, and the
helpers their tests ask and read with.

One pair of workers serves each test module that uses ``world``; a test that kills a
worker leaves the next test to start it again. Every test works in a workspace of its
own, so no answer comes from another test's cache, and a worker's log is in every
failure message.
"""

from __future__ import annotations

import pytest

from tests.fakes.openai_server import FakeOpenAI
from tests.support.deployment import Deployment, Plan
from tests.support.team_support import DOCS, LIMIT, REDIS_DB, World
from tests.support.workers_support import Team, slack_id


@pytest.fixture(scope="module")
def team_channels() -> tuple[str, str, str]:
    """Channel ids: the default rule (the public scope), and one per scope."""
    return slack_id("C"), slack_id("C"), slack_id("C")


@pytest.fixture(scope="module")
def deployment_plan(team_channels: tuple[str, str, str]) -> Plan:
    _, alpha, beta = team_channels
    channels = f'[channels.{alpha}]\nscopes = ["alpha"]\n[channels.{beta}]\nscopes = ["beta"]\n'
    settings: dict[str, str | float | int] = {
        "rate_limit_per_minute": LIMIT,
        "redis_retry_s": 0.5,
        "channels": channels,
        "default_scope": "public",
    }
    return Plan(REDIS_DB, DOCS, slack_workers=True, ingest_in_process=True, settings=settings)


@pytest.fixture(scope="module")
def world(deployment: Deployment, team_channels: tuple[str, str, str]) -> World:
    return World(deployment.team, deployment.slack, deployment.redis_url, *team_channels)


@pytest.fixture
def team(world: World, hosts: Deployment, fake_llm: FakeOpenAI) -> Team:
    """Both workers running (again, after a test killed one), a clean fake Slack."""
    return hosts.team
