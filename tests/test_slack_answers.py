"""Questions in Slack get answered where they were asked, live, with sources and feedback.

The real Bolt app, served over HTTP, receives signed events; the real agent (extractive
mode on the sample documents unless the fake LLM is given) answers; the fake Slack
records what a user would see.
"""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from adapters.chat.channels import ChannelRule, ChannelRules
from agent.events import Final
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import TEAM, FakeSlack
from tests.support.agent_support import (
    FOLLOW_UP_ANALYSES,
    FOLLOW_UP_ANSWERS,
    request_text,
    script_answer,
)
from tests.support.slack_support import (
    ALICE,
    BOB,
    CHANNEL,
    DM,
    slack_bot,
    until,
)

BACKUPS_KO = "Postgres 백업은 며칠 동안 보관되나요?"
ACCESS_EN = "How do I get production access?"

pytest_plugins = ("tests.support.slack_fixtures",)
T = TypeVar("T")


def only(items: list[T]) -> T:
    assert len(items) == 1, items
    return items[0]


async def test_a_mention_is_answered_in_its_thread_with_live_steps_sources_and_feedback(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        asked = await slack.mention(BACKUPS_KO)  # arrives as app_mention and as message
        answer = only(await until(lambda: fake_slack.answered(CHANNEL, asked["ts"])))
        await until(lambda: fake_slack.calls_to("assistant.threads.setStatus")[1:])

    # Native streaming: the stream opens at once, "thinking", before the agent's first step.
    start = only(fake_slack.calls_to("chat.startStream"))
    assert start.args["thread_ts"] == asked["ts"]
    assert (start.args["recipient_team_id"], start.args["recipient_user_id"]) == (TEAM, ALICE)
    (opening,) = start.args["chunks"]
    assert opening == {"type": "task_update", "id": "step-0", "title": "생각하는 중…",
                       "status": "in_progress"}  # fmt: skip
    # The agent's steps follow, in Korean (its first step takes the opening task's place);
    # every step ends complete, and the answer text follows the steps.
    assert answer.tasks["step-0"] == ("질문을 분석하는 중…", "complete")
    assert len(answer.tasks) >= 3
    assert all(status == "complete" for _, status in answer.tasks.values())
    assert "35 days" in answer.markdown and "[1]" in answer.markdown
    texts = answer.block_texts()
    assert (
        texts[0].startswith("*출처*") and "Operations handbook" in texts[0] and "p. 4" in texts[0]
    )
    up, down = answer.feedback_values()
    assert up.startswith("up:") and down == "down:" + up.removeprefix("up:")
    # The stream was opened before the answer was known, and closed with it.
    methods = [c.method for c in fake_slack.calls]
    assert methods.index("chat.startStream") < methods.index("chat.stopStream")
    assert len(fake_slack.answered(CHANNEL, asked["ts"])) == 1  # two events, one answer
    # A thread status while thinking, cleared at the end.
    statuses = [c.args for c in fake_slack.calls_to("assistant.threads.setStatus")]
    assert statuses[0]["status"] == "답변을 준비하는 중…" and statuses[-1]["status"] == ""
    assert all(s["thread_ts"] == asked["ts"] for s in statuses)
    assert methods.index("assistant.threads.setStatus") < methods.index("chat.stopStream")


async def test_an_english_question_gets_english_steps_and_sources_header(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        asked = await slack.mention(ACCESS_EN)
        answer = only(await until(lambda: fake_slack.answered(CHANNEL, asked["ts"])))
    assert "14 days" in answer.markdown
    assert answer.block_texts()[0].startswith("*Sources*\n[1] Team FAQ")
    assert answer.tasks["step-0"] == ("Analyzing the question…", "complete")
    assert fake_slack.calls_to("chat.startStream")[0].args["chunks"][0]["title"] == "Thinking…"


async def test_a_direct_message_is_answered_in_its_thread_and_so_is_every_reply_there(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        asked = await slack.say(ACCESS_EN, channel=DM)  # no mention needed in a DM
        first = only(await until(lambda: fake_slack.answered(DM, asked["ts"])))
        await slack.say(BACKUPS_KO, channel=DM, thread_ts=asked["ts"])
        await until(lambda: len(fake_slack.answered(DM, asked["ts"])) == 2)
    second = fake_slack.answered(DM, asked["ts"])[1]
    assert "14 days" in first.markdown and "35 days" in second.markdown
    assert only(fake_slack.calls_to("chat.startStream")[:1]).args["channel"] == DM


async def test_a_reply_in_the_bots_thread_is_answered_without_a_mention_using_the_history(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_answer(fake_llm, *FOLLOW_UP_ANSWERS, analyses=FOLLOW_UP_ANALYSES)
    async with slack_bot(fake_slack, sample_kb, tmp_path, llm=fake_llm) as slack:
        asked = await slack.mention("How long are Postgres backups kept?")
        await until(lambda: fake_slack.answered(CHANNEL, asked["ts"]))
        await slack.say("and where is the handover?", user=BOB, thread_ts=asked["ts"])
        await until(lambda: len(fake_slack.answered(CHANNEL, asked["ts"])) == 2)
    second = fake_slack.answered(CHANNEL, asked["ts"])[1]
    assert "#oncall-handover" in second.markdown
    # The follow-up reached the agent in the same conversation: the history was in its prompt.
    analysis_request = [c.body for c in fake_llm.calls if c.task == "Analysis"][1]
    assert "How long are Postgres backups kept?" in request_text(analysis_request)
    # The stream for the follow-up is addressed to the one who asked it.
    assert fake_slack.calls_to("chat.startStream")[1].args["recipient_user_id"] == BOB


async def test_thread_replies_that_are_not_for_the_bot_are_left_alone(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    rules = ChannelRules(channels={"C0QUIET": ChannelRule(follow_ups=False)})
    async with slack_bot(fake_slack, sample_kb, tmp_path, rules=rules) as slack:
        quiet = await slack.mention(ACCESS_EN, channel="C0QUIET")
        await until(lambda: fake_slack.answered("C0QUIET", quiet["ts"]))
        answered = await slack.mention(ACCESS_EN)
        await until(lambda: fake_slack.answered(CHANNEL, answered["ts"]))
        # Follow-ups are off in C0QUIET; a reply to someone else is for them; a thread the
        # bot never joined is none of its business; a top-level message is not addressed.
        await slack.say("what about staging?", channel="C0QUIET", thread_ts=quiet["ts"])
        await slack.say(f"<@{BOB}> can you approve it?", thread_ts=answered["ts"])
        await slack.say(BACKUPS_KO, thread_ts="1600000000.000001")
        await slack.say(BACKUPS_KO)
        # A question that is answered, sent after them: when it is done, they were handled.
        await slack.mention(BACKUPS_KO, channel="C0QUIET", thread_ts=quiet["ts"])
        await until(lambda: len(fake_slack.answered("C0QUIET", quiet["ts"])) == 2)
    assert len(fake_slack.answered(CHANNEL, answered["ts"])) == 1
    assert not fake_slack.replies(CHANNEL, "1600000000.000001")
    assert len(fake_slack.calls_to("chat.startStream")) == 3


async def test_without_streaming_the_reply_is_posted_then_edited_into_the_answer(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path, streaming=False) as slack:
        asked = await slack.mention(BACKUPS_KO)
        answer = only(await until(lambda: fake_slack.answered(CHANNEL, asked["ts"])))
    assert not fake_slack.calls_to("chat.startStream")
    posted = only(fake_slack.calls_to("chat.postMessage"))
    assert posted.args["thread_ts"] == asked["ts"]
    assert posted.args["blocks"][0]["elements"][0]["text"] == "생각하는 중…"  # at once
    updates = fake_slack.calls_to("chat.update")
    assert updates and all(u.args["ts"] == answer.ts for u in updates)
    live = [u.args["blocks"][0]["elements"][0]["text"] for u in updates[:-1]]
    assert any("질문을 분석하는 중…" in text for text in live)  # then the agent's steps
    assert answer.blocks[0]["type"] == "markdown" and "35 days" in answer.blocks[0]["text"]
    assert "35 days" in answer.text  # the notification text
    assert answer.block_texts()[1].startswith("*출처*") and answer.feedback_values()


async def test_channel_rules_give_reasons_and_scopes(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    rules = ChannelRules(
        channels={
            "C0CLOSED": ChannelRule(answer=False),
            "C0HR": ChannelRule(scopes=frozenset({"hr"})),  # no sample document is in "hr"
        }
    )
    async with slack_bot(fake_slack, sample_kb, tmp_path, rules=rules) as slack:
        closed = await slack.mention(ACCESS_EN, channel="C0CLOSED")
        empty = await slack.mention("  ")
        scoped = await slack.mention(ACCESS_EN, channel="C0HR")
        reason = only(await until(lambda: fake_slack.replies("C0CLOSED", closed["ts"])))
        nudge = only(await until(lambda: fake_slack.replies(CHANNEL, empty["ts"])))
        hr = only(await until(lambda: fake_slack.answered("C0HR", scoped["ts"])))
    assert reason.text == "I am not set up to answer in this channel. Please ask an admin."
    assert nudge.text.startswith("How can I help?")
    assert "14 days" not in hr.markdown and not any("Sources" in t for t in hr.block_texts())
    assert not fake_slack.calls_to("chat.startStream")[1:]  # only the scoped one ran the agent


async def test_a_mention_and_slash_ask_run_with_their_channels_features(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    rules = ChannelRules(channels={"C0FAST": ChannelRule(features={"rerank": False})})
    finals: list[Final] = []
    async with slack_bot(fake_slack, sample_kb, tmp_path, rules=rules, finals=finals) as slack:
        asked = await slack.mention(BACKUPS_KO, channel="C0FAST")
        await until(lambda: fake_slack.answered("C0FAST", asked["ts"]))
        await slack.command(ACCESS_EN, channel="C0FAST")
        await slack.mention(BACKUPS_KO)  # a channel without a section: the defaults
        await until(lambda: len(finals) == 3)
    ruled = [f for f in finals if not f.features["rerank"]]
    assert len(ruled) == 2 and all(f.thread_id.startswith(f"slack:{TEAM}:C0FAST:") for f in ruled)
