"""The fake Slack as pytest fixtures; test modules load them with
``pytest_plugins = ("tests.support.slack_fixtures",)``."""

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
def fake_slack(fake_slack_server: FakeSlack) -> Iterator[FakeSlack]:
    """The fake Slack, with no calls, messages or failures left from another test."""
    fake_slack_server.reset()
    yield fake_slack_server
    # Every call the app made carried the arguments its method requires.
    assert not fake_slack_server.missing_args, fake_slack_server.missing_args
