"""The AI-app pane, driven as Slack drives it: a started thread gets a greeting and
suggested prompts from the documents the user may search, a message gets step statuses,
a cited answer and a title, and the channel the user views decides which documents may
answer (never another channel's)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from adapters.chat.channels import ChannelRule, ChannelRules
from agent.events import Final
from agent.retrieval.ingest import IngestItem, Ingestor
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.slack_server import TEAM, FakeSlack
from tests.support.slack_support import ALICE, DM, SlackHarness, slack_bot, until

pytest_plugins = ("tests.support.slack_fixtures",)

FALCON = "# Falcon release guide\n\nThe Falcon deploy window is Tuesday at 14:00 KST.\n"
HERON = "# Heron budget\n\nThe Heron project budget is 40,000 EUR for this year.\n"
TEAM_A, TEAM_B = "C0TEAMA", "C0TEAMB"
RULES = ChannelRules(
    defaults=ChannelRule(scopes=frozenset({"team-a"})),
    channels={
        TEAM_A: ChannelRule(scopes=frozenset({"team-a"})),
        TEAM_B: ChannelRule(scopes=frozenset({"team-b"})),
    },
)


def two_teams(kb: KnowledgeBase) -> KnowledgeBase:
    for name, text, scope in (("falcon.md", FALCON, "team-a"), ("heron.md", HERON, "team-b")):
        data = text.encode()
        Ingestor(kb).ingest([IngestItem(name, name, functools.partial(bytes, data), scope=scope)])
    return kb


async def start_thread(slack: SlackHarness, viewing: str) -> str:
    thread_ts = slack.next_ts()
    context = {"channel_id": viewing, "team_id": TEAM, "enterprise_id": None}
    event = {
        "type": "assistant_thread_started",
        "assistant_thread": {
            "user_id": ALICE, "channel_id": DM, "thread_ts": thread_ts, "context": context,
        },
        "event_ts": thread_ts,
    }  # fmt: skip
    assert await slack.event(event) == 200
    return thread_ts


async def change_context(slack: SlackHarness, thread_ts: str, viewing: str) -> None:
    event = {
        "type": "assistant_thread_context_changed",
        "assistant_thread": {
            "user_id": ALICE, "channel_id": DM, "thread_ts": thread_ts,
            "context": {"channel_id": viewing, "team_id": TEAM, "enterprise_id": None},
        },
        "event_ts": slack.next_ts(),
    }  # fmt: skip
    assert await slack.event(event) == 200


def args(fake: FakeSlack, method: str) -> list[dict[str, Any]]:
    return [c.args for c in fake.ok_calls(method)]


async def test_a_started_thread_is_greeted_in_korean_with_prompts_from_its_documents(
    fake_slack: FakeSlack, kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake_slack.locales[ALICE] = "ko-KR"
    async with slack_bot(fake_slack, two_teams(kb), tmp_path, rules=RULES) as slack:
        thread_ts = await start_thread(slack, TEAM_B)
        prompts = await until(lambda: args(fake_slack, "assistant.threads.setSuggestedPrompts"))
    greeting = fake_slack.replies(DM, thread_ts)[0]
    assert greeting.text.startswith("안녕하세요!")
    assert greeting.metadata == {
        "event_type": "assistant_thread_context",
        "event_payload": {"channel_id": TEAM_B, "team_id": TEAM, "enterprise_id": None},
    }
    titles = [p["title"] for p in prompts[0]["prompts"]]
    assert titles == ["“Heron budget” 문서의 핵심 내용은?"]  # team B's only; never Falcon


async def test_a_question_gets_statuses_a_title_and_the_viewed_channels_documents_only(
    fake_slack: FakeSlack, kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, two_teams(kb), tmp_path, rules=RULES) as slack:
        thread_ts = await start_thread(slack, TEAM_A)
        await until(lambda: fake_slack.replies(DM, thread_ts))
        await slack.say("When is the Falcon deploy window?", channel=DM, thread_ts=thread_ts)
        falcon = await until(lambda: fake_slack.answered(DM, thread_ts))
        # The user moves to team B's channel: the same question no longer finds Falcon.
        await change_context(slack, thread_ts, TEAM_B)
        await until(lambda: fake_slack.ok_calls("chat.update"))
        await slack.say("When is the Falcon deploy window?", channel=DM, thread_ts=thread_ts)
        await until(lambda: len(fake_slack.answered(DM, thread_ts)) == 2)
        await slack.say("What is the Heron budget?", channel=DM, thread_ts=thread_ts)
        await until(lambda: len(fake_slack.answered(DM, thread_ts)) == 3)
    first, leak_probe, heron = fake_slack.answered(DM, thread_ts)
    assert first is falcon[0] and "14:00" in first.markdown
    assert any("falcon.md" in t or "Falcon" in t for t in first.block_texts())
    assert "14:00" not in leak_probe.markdown
    assert not any("Falcon" in t for t in leak_probe.block_texts())
    assert "40,000" in heron.markdown and any("Heron" in t for t in heron.block_texts())
    statuses = [a["status"] for a in args(fake_slack, "assistant.threads.setStatus")]
    assert "is thinking…" in statuses and "" in statuses
    assert any(s not in ("is thinking…", "") for s in statuses)  # the agent's own steps
    titles = args(fake_slack, "assistant.threads.setTitle")
    assert [t["title"] for t in titles] == ["When is the Falcon deploy window?"]  # once


async def test_app_home_shows_the_document_counts_in_the_users_scopes_and_admin_figures(
    fake_slack: FakeSlack, kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake_slack.admins.add(ALICE)
    async with slack_bot(fake_slack, two_teams(kb), tmp_path, rules=RULES) as slack:
        event = {"type": "app_home_opened", "user": ALICE, "channel": DM, "tab": "home"}
        assert await slack.event(event) == 200
        view = await until(lambda: fake_slack.views.get(ALICE))
    text = "\n".join(b["text"]["text"] for b in view["blocks"])
    assert "`team-a`: 1 documents" in text and "team-b" not in text  # the DM rule's scope
    assert "How to ask" in text and "This week (admins)" in text


async def test_the_message_shortcut_answers_the_message_in_its_thread(
    fake_slack: FakeSlack, kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, two_teams(kb), tmp_path, rules=RULES) as slack:
        pasted = slack.next_ts()
        payload = {
            "type": "message_action", "callback_id": "ask_about_message",
            "trigger_id": "trigger-shortcut-1", "team": {"id": TEAM},
            "user": {"id": ALICE, "team_id": TEAM}, "channel": {"id": TEAM_A},
            "message": {"type": "message", "user": "U0CUSTOMER", "ts": pasted,
                        "text": "Falcon 배포 가능한 시간이 언제인가요?"},
            "response_url": fake_slack.response_url("shortcut-1"),
        }  # fmt: skip
        status, _ = await slack.post(
            urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded"
        )
        assert status == 200
        answer = await until(lambda: fake_slack.answered(TEAM_A, pasted))
    assert "14:00" in answer[0].markdown
    assert fake_slack.calls_to("chat.startStream")[0].args["recipient_user_id"] == ALICE


async def test_the_pane_answers_with_the_viewed_channels_features(
    fake_slack: FakeSlack, kb: KnowledgeBase, tmp_path: Path
) -> None:
    # The viewed channel's whole rule answers: its features too, not the DM's defaults.
    fast = ChannelRule(scopes=frozenset({"team-b"}), features={"rerank": False})
    rules = RULES.model_copy(update={"channels": {**RULES.channels, TEAM_B: fast}})
    finals: list[Final] = []
    async with slack_bot(fake_slack, two_teams(kb), tmp_path, rules=rules, finals=finals) as slack:
        thread_ts = await start_thread(slack, TEAM_B)
        await until(lambda: fake_slack.replies(DM, thread_ts))
        await slack.say("What is the Heron budget?", channel=DM, thread_ts=thread_ts)
        answer = await until(lambda: fake_slack.answered(DM, thread_ts))
        await until(lambda: finals)
    assert "40,000" in answer[0].markdown  # team B's scopes, as before
    assert finals[0].features["rerank"] is False
