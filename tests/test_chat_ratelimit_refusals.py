"""Too many questions in a minute: the asker is told, in their language, when they can ask
again; the agent does not run for them, the refusal is counted, and others still ask."""

from __future__ import annotations

import re
from pathlib import Path

from adapters.chat.metrics import Metrics
from adapters.chat.ratelimit import LocalRateLimiter
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.discord_wire import EPHEMERAL
from tests.fakes.slack_server import FakeSlack
from tests.support.chat_support import chat_services
from tests.support.discord_support import discord_bot, has_feedback, until
from tests.support.slack_support import BOB, CHANNEL, slack_bot
from tests.support.slack_support import until as slack_until

pytest_plugins = ("tests.support.slack_fixtures",)

ACCESS_EN = "How do I get production access?"
BACKUPS_KO = "Postgres 백업은 며칠 동안 보관되나요?"
KOREAN = r"짧은 시간에 질문을 너무 많이 하셨습니다\. \d+초 후에 다시 물어봐 주세요\."
ENGLISH = r"You have asked too many questions in a short time\. Please ask again in \d+ s\."


def rate_limited(metrics: Metrics, platform: str) -> float:
    value = metrics.registry.get_sample_value("teamrag_rate_limited_total", {"platform": platform})
    return value or 0.0


async def test_slack_says_when_to_ask_again_in_the_askers_language(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        metrics = Metrics(process=False)
        slack.services.limiter = LocalRateLimiter(1)
        slack.services.metrics = metrics
        first = await slack.mention(ACCESS_EN)
        await slack_until(lambda: fake_slack.answered(CHANNEL, first["ts"]))
        second = await slack.mention(BACKUPS_KO)
        refusal = (await slack_until(lambda: fake_slack.replies(CHANNEL, second["ts"])))[0]
        _, ack, _ = await slack.command(ACCESS_EN)  # /ask is refused in its ack, privately
        other = await slack.mention(ACCESS_EN, user=BOB)  # someone else may still ask
        await slack_until(lambda: fake_slack.answered(CHANNEL, other["ts"]))
    assert re.fullmatch(
        r"짧은 시간에 질문을 너무 많이 하셨습니다\. \d+초 후에 다시 물어봐 주세요\.", refusal.text
    )
    assert not refusal.feedback_values()  # a refusal, not an answer
    assert ack["response_type"] == "ephemeral" and re.search(r"ask again in \d+ s\.$", ack["text"])
    assert rate_limited(metrics, "slack") == 2


async def test_discord_refuses_privately_with_the_wait(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        metrics = Metrics(process=False)
        services.limiter = LocalRateLimiter(1)
        services.metrics = metrics
        first = await bot.fake.slash(ACCESS_EN)
        await until(
            lambda: (m := bot.fake.original(first)) is not None and has_feedback(m), "answer"
        )
        second = await bot.fake.slash(ACCESS_EN)
        refused = await until(lambda: bot.fake.original(second), "the refusal")
    assert refused["flags"] & EPHEMERAL and not has_feedback(refused)
    assert re.fullmatch(ENGLISH, refused["content"])
    assert rate_limited(metrics, "discord") == 1
