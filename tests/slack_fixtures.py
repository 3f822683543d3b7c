"""The fake Slack as pytest fixtures; test modules load them with
``pytest_plugins = ("tests.slack_fixtures",)``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.slack_server import FakeSlack


@pytest.fixture(scope="session")
def fake_slack_server() -> Iterator[FakeSlack]:
    server = FakeSlack().start()
    yield server
    server.stop()


@pytest.fixture
def fake_slack(fake_slack_server: FakeSlack) -> FakeSlack:
    """The fake Slack, with no calls, messages or failures left from another test."""
    fake_slack_server.reset()
    return fake_slack_server
