"""The HTTP Events API endpoint: only Slack gets in, and Slack is answered at once."""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import urlencode

from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import BOT_USER, FakeSlack
from tests.support.agent_support import script_answer
from tests.support.slack_support import (
    CHANNEL,
    slack_bot,
    until,
)

pytest_plugins = ("tests.support.slack_fixtures",)


def _mention_body(ts: str) -> str:
    event = {"type": "app_mention", "channel": CHANNEL, "user": "U0ALICE", "ts": ts,
             "text": f"<@{BOT_USER}> How do I get production access?"}  # fmt: skip
    return json.dumps({"type": "event_callback", "team_id": "T0TEAM", "event_id": "Ev1",
                       "event": event})  # fmt: skip


async def test_requests_with_a_bad_signature_or_an_old_timestamp_are_rejected(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        body = _mention_body("1700000000.000001")
        forged = await slack.post(body, "application/json", secret="not-the-secret")
        replayed = await slack.post(body, "application/json", timestamp=int(time.time()) - 600)
        command = urlencode({"command": "/ask", "text": "hi", "team_id": "T0TEAM"})
        forged_command = await slack.post(command, "application/x-www-form-urlencoded", secret="x")
        # Rejected before anything runs: Slack was never called.
        assert [forged[0], replayed[0], forged_command[0]] == [401, 401, 401]
        assert fake_slack.calls == []
        # The same body, signed now with the right secret, is taken.
        status, _ = await slack.post(body, "application/json")
        assert status == 200
        await until(lambda: fake_slack.answered(CHANNEL, "1700000000.000001"))


async def test_the_url_verification_challenge_is_answered(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        body = json.dumps({"type": "url_verification", "challenge": "c-123", "token": "x"})
        status, text = await slack.post(body, "application/json")
    assert status == 200 and "c-123" in text


async def test_an_event_is_acknowledged_before_the_answer_is_ready(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_answer(fake_llm, "Ask your team lead; access lasts 14 days [1].")
    fake_llm.latency_s = 0.5  # every LLM call takes half a second: the answer takes seconds
    async with slack_bot(fake_slack, sample_kb, tmp_path, llm=fake_llm) as slack:
        asked = await slack.mention("How do I get production access?")
        # Both deliveries were acknowledged (mention() checks the 200s) with no answer yet.
        assert not fake_slack.calls_to("chat.stopStream")
        answer = (await until(lambda: fake_slack.answered(CHANNEL, asked["ts"])))[0]
    assert answer.markdown == "Ask your team lead; access lasts 14 days [1]."
