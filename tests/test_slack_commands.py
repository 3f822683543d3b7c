"""``/ask`` anywhere, in the channel or privately, and the thumbs on every answer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

from adapters.chat.channels import ChannelRule, ChannelRules
from adapters.chat.live import RunTurn
from agent.events import Event, Final, Progress, Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.slack_server import Call, FakeSlack
from tests.support.slack_support import (
    ALICE,
    BOB,
    CHANNEL,
    slack_bot,
    until,
)

ACCESS_EN = "How do I get production access?"
BACKUPS_KO = "Postgres 백업은 며칠 동안 보관되나요?"

pytest_plugins = ("tests.support.slack_fixtures",)


def answers_through_urls(fake: FakeSlack) -> list[Call]:
    """The response URL uses that carry an answer (its feedback buttons), not progress."""
    return [
        c
        for c in fake.ok_calls("response_url")
        if any(b["type"] == "context_actions" for b in c.args.get("blocks") or [])
    ]


def answer_only(run: RunTurn) -> RunTurn:
    """The agent without its progress events: just the answer."""

    async def answering(turn: Turn) -> AsyncIterator[Event]:
        async for event in run(turn):
            if isinstance(event, Final):
                yield event

    return answering


async def test_ask_posts_a_new_message_that_becomes_the_answer_and_starts_a_thread(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        status, ack, _ = await slack.command(ACCESS_EN)
        assert (status, ack) == (200, {})  # nothing ephemeral: the answer is for everyone
        answer = (await until(lambda: fake_slack.answered(CHANNEL, None)))[0]
        # A reply in the new thread, without a mention, is a follow-up.
        await slack.say(BACKUPS_KO, user=BOB, thread_ts=answer.ts)
        follow_up = (await until(lambda: fake_slack.answered(CHANNEL, answer.ts)))[0]
    placeholder = fake_slack.calls_to("chat.postMessage")[0]
    assert placeholder.args.get("thread_ts") is None  # a new top-level message
    assert f"<@{ALICE}>: {ACCESS_EN}" in placeholder.args["blocks"][0]["elements"][0]["text"]
    assert answer.block_texts()[0] == f"<@{ALICE}>: {ACCESS_EN}"  # the question stays on top
    assert "14 days" in answer.markdown and answer.edits >= 1
    assert any(t.startswith("*Sources*") for t in answer.block_texts()) and answer.feedback_values()
    assert "35 days" in follow_up.markdown


async def test_a_private_ask_is_answered_only_to_the_asker(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        status, ack, key = await slack.command(f"-p {ACCESS_EN}")
        _, ack_ko, key_ko = await slack.command(f"비공개 {BACKUPS_KO}")
        answers = await until(
            lambda: found if len(found := answers_through_urls(fake_slack)) == 2 else None
        )
    assert status == 200
    assert ack == {"response_type": "ephemeral", "text": "Thinking…"}
    assert ack_ko == {"response_type": "ephemeral", "text": "생각하는 중…"}
    by_key = {c.args["key"]: c.args for c in answers}
    english, korean = by_key[key], by_key[key_ko]
    # The answer takes the place of "Thinking…" (or of the progress that replaced it).
    assert english["response_type"] == "ephemeral" and english["replace_original"] is True
    assert "14 days" in english["blocks"][0]["text"]
    assert any(b["type"] == "context_actions" for b in english["blocks"])
    assert "35 days" in korean["blocks"][0]["text"]
    assert not fake_slack.calls_to("chat.postMessage", "chat.startStream")  # nothing public


async def test_ask_explains_itself_when_it_cannot_answer(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    rules = ChannelRules(channels={"C0CLOSED": ChannelRule(answer=False)})
    async with slack_bot(fake_slack, sample_kb, tmp_path, rules=rules) as slack:
        _, empty, _ = await slack.command("  ")
        _, flag_only, _ = await slack.command("-p")
        _, closed, _ = await slack.command(ACCESS_EN, channel="C0CLOSED")
    assert empty["response_type"] == "ephemeral" and "/ask When can we deploy?" in empty["text"]
    assert flag_only == empty
    assert closed["text"] == "I am not set up to answer in this channel. Please ask an admin."
    assert not [c for c in fake_slack.calls if c.method != "auth.test"]


async def test_ask_in_a_channel_the_bot_is_not_in_answers_through_the_response_url(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake_slack.fail("chat.postMessage", "not_in_channel")
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        _, ack, key = await slack.command(ACCESS_EN, channel="C0ELSEWHERE")
        (answer,) = await until(lambda: answers_through_urls(fake_slack))
    assert ack == {}
    assert answer.args["key"] == key and answer.args["response_type"] == "in_channel"
    assert "14 days" in answer.args["blocks"][0]["text"]


async def test_feedback_clicks_are_recorded_with_the_question_answer_and_user(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        asked = await slack.mention(BACKUPS_KO)
        answer = (await until(lambda: fake_slack.answered(CHANNEL, asked["ts"])))[0]
        up, down = answer.feedback_values()
        block_id = next(b["block_id"] for b in answer.blocks if b["type"] == "context_actions")
        thanks_url = fake_slack.response_url("click-1")
        assert await slack.click(up, block_id=block_id, response_url=thanks_url) == 200
        (thanks,) = await until(lambda: fake_slack.ok_calls("response_url"))
        votes = slack.services.feedback.entries(None)
        # A changed mind replaces the vote; another user's vote is their own.
        await slack.click(down, response_url=fake_slack.response_url("click-2"))
        await slack.click(up, user=BOB, response_url=fake_slack.response_url("click-3"))
        await until(lambda: len(fake_slack.ok_calls("response_url")) == 3)
        later = slack.services.feedback.entries(None)
    assert thanks.args["text"] == "의견 감사합니다!" and thanks.args["response_type"] == "ephemeral"
    (vote,) = votes
    assert (vote.rating, vote.voter) == ("up", ALICE)
    assert vote.answer.question == BACKUPS_KO and "35 days" in vote.answer.answer
    assert vote.answer.platform == "slack" and vote.answer.channel == CHANNEL
    assert vote.answer.thread_id == f"slack:T0TEAM:{CHANNEL}:{asked['ts']}"
    assert sorted((v.voter, v.rating) for v in later) == [(ALICE, "down"), (BOB, "up")]


async def test_a_click_on_a_forgotten_answer_says_so_and_one_without_a_url_still_thanks(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        await slack.click("down:0000000000000000", response_url=fake_slack.response_url("old"))
        (expired,) = await until(lambda: fake_slack.ok_calls("response_url"))
        asked = await slack.mention(ACCESS_EN)
        answer = (await until(lambda: fake_slack.answered(CHANNEL, asked["ts"])))[0]
        await slack.click(answer.feedback_values()[1], user=BOB)  # no response_url in the payload
        (ephemeral,) = await until(lambda: fake_slack.ok_calls("chat.postEphemeral"))
        votes = slack.services.feedback.entries(None)
    assert expired.args["text"].startswith("I could not find this answer any more")
    assert ephemeral.args["user"] == BOB and ephemeral.args["channel"] == CHANNEL
    assert ephemeral.args["text"] == "Thanks. We will use this to improve the answers."
    assert [(v.voter, v.rating) for v in votes] == [(BOB, "down")]


async def test_a_private_answer_slack_refuses_is_sent_plainly_and_a_command_counts_once(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake_slack.fail("response_url", "invalid_blocks", status=400)  # the formatted answer
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        slack.services.run = answer_only(slack.services.run)  # the answer is the first use
        _, first_ack, key = await slack.command(f"-p {ACCESS_EN}")
        _, again_ack, _ = await slack.command(f"-p {ACCESS_EN}", key=key)  # delivered twice
        await until(lambda: fake_slack.ok_calls("response_url"))
        sentinel = await slack.mention(BACKUPS_KO)  # done after the command's answer
        await until(lambda: fake_slack.answered(CHANNEL, sentinel["ts"]))
    assert first_ack["text"] == "Thinking…" and again_ack == {}
    refused, plain = fake_slack.calls_to("response_url")  # one answer, not two
    assert refused.status == 400 and "blocks" in refused.args
    assert "blocks" not in plain.args and plain.args["response_type"] == "ephemeral"
    assert plain.args["text"].startswith("I had an answer but could not send it in full format")
    assert "14 days" in plain.args["text"]


async def test_a_broken_agent_behind_a_private_ask_still_gets_a_reason(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async def broken(turn: Turn) -> AsyncIterator[Event]:
        yield Progress("analyze", "질문을 분석하는 중…")  # and then nothing: no Final

    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        slack.services.run = broken  # stands in for an agent that breaks its promise
        await slack.command(f"-p {BACKUPS_KO}")
        (reason,) = await until(lambda: fake_slack.ok_calls("response_url"))
    assert reason.args["text"].startswith("죄송합니다. 답변을 만드는 중에 문제가 생겼습니다.")
    assert reason.args["response_type"] == "ephemeral"
