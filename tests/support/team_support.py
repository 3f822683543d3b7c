"""What the multi-worker tests share (``tests/support/team_fixtures.py`` starts the workers): the
documents, the channels' scopes, and how a test asks as a Slack user and reads the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_chat import Message
from tests.fakes.slack_server import BOT_USER, FakeSlack
from tests.support.agent_support import request_text
from tests.support.slack_support import SlackSender, until
from tests.support.workers_support import Team, slack_id

LIMIT = 2  # questions per user per minute, across both workers
REDIS_DB = 3  # apart from the database the other Redis tests flush

DOCS = {
    "public": {
        "handbook.md": "# Operations handbook\n\nPostgres backups are kept for 35 days. The "
        "nightly full backup runs at 03:00 and is copied to a second region.\n",
    },
    "alpha": {
        "falcon-launch.md": "# Falcon launch plan\n\nProject Falcon launches on March 3. "
        "The launch checklist and the Falcon rollout are owned by the alpha team.\n",
    },
    "beta": {
        "falcon-budget.md": "# Falcon budget review\n\nProject Falcon has a budget of 2 "
        "million won. The Falcon cost review is owned by the beta team.\n",
    },
}
FALCON = "What is the plan for Project Falcon?"


@dataclass
class World:
    team: Team
    slack: FakeSlack
    redis_url: str
    general: str  # channel ids: default rule (the public scope), and one per scope
    alpha: str
    beta: str


@dataclass(frozen=True)
class Asker:
    """Who asks where. Each test asks in a workspace of its own (so no answer comes from
    another test's cache) and as a user of its own (the rate limit counts per user)."""

    team: str
    channel: str
    user: str = field(default_factory=lambda: slack_id("U"))


async def ask(
    sender: SlackSender,
    text: str,
    asker: Asker,
    *,
    thread_ts: str | None = None,
    mention: bool = True,
) -> dict[str, Any]:
    """A message to the bot as Slack delivers it: a mention comes as ``app_mention`` and
    as ``message`` (two event ids, one message); a thread reply as ``message`` only."""
    message = sender.user_message(
        f"<@{BOT_USER}> {text}" if mention else text,
        channel=asker.channel,
        user=asker.user,
        thread_ts=thread_ts,
    )
    message["team"] = asker.team
    if mention:
        assert await sender.event(app_mention(message), team=asker.team) == 200
    assert await sender.event(message, team=asker.team) == 200
    return message


def app_mention(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "channel_type"} | {"type": "app_mention"}


def texts(messages: list[Message]) -> list[str]:
    return [m.markdown or m.text for m in messages]


def sources_of(message: Message) -> str:
    return "\n".join(message.block_texts())


def calls_about(llm: FakeOpenAI, task: str, tag: str) -> list[dict[str, Any]]:
    return [c.body for c in llm.calls if c.task == task and tag in request_text(c.body)]


async def answered(world: World, asked: dict[str, Any], team: Team) -> list[Message]:
    thread = (str(asked["channel"]), str(asked["ts"]))
    return await until(lambda: world.slack.answered(*thread), what=f"an answer\n{team.logs()}")
