"""The shortcut on a thread reply brings the thread's first message along; App Home's
admin section shows the week's real usage, to admins only, and the questions the
documents did not answer, by topic."""

from __future__ import annotations

import json
import time
from pathlib import Path
from urllib.parse import urlencode

from adapters.chat.observe import observed
from adapters.chat.usage import SqliteUsageStore, asked, usage_rows
from agent.events import Final, Turn, Usage
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import TEAM, FakeSlack
from tests.support.agent_support import request_text, script_answer
from tests.support.slack_support import ALICE, BOB, DM, SlackHarness, slack_bot, until
from tests.support.slack_support import CHANNEL as GENERAL

pytest_plugins = ("tests.support.slack_fixtures",)

CHANNEL = "C0SUPPORT"
CUSTOMER = "Customer Acme: our Postgres restore failed last night, how far back can we go?"
REPLY = "How long are those backups kept?"
NOT_COVERED = "How do I book a meeting room?"


async def use_shortcut(slack: SlackHarness, ts: str, thread_ts: str, text: str) -> None:
    payload = {
        "type": "message_action", "callback_id": "ask_about_message",
        "trigger_id": "trigger-shortcut-thread", "team": {"id": TEAM},
        "user": {"id": ALICE, "team_id": TEAM}, "channel": {"id": CHANNEL},
        "message": {"type": "message", "user": BOB, "ts": ts, "thread_ts": thread_ts,
                    "text": text},
    }  # fmt: skip
    body = urlencode({"payload": json.dumps(payload)})
    assert (await slack.post(body, "application/x-www-form-urlencoded"))[0] == 200


async def test_the_shortcut_on_a_thread_reply_brings_the_threads_first_message(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_answer(fake_llm, "Postgres backups are kept for 35 days [1].")
    parent = fake_slack.post_history(CHANNEL, CUSTOMER, user=BOB)
    reply = fake_slack.post_history(CHANNEL, REPLY, user=BOB, thread_ts=parent)
    async with slack_bot(fake_slack, sample_kb, tmp_path, llm=fake_llm) as slack:
        await use_shortcut(slack, reply, parent, REPLY)
        (answer,) = await until(lambda: fake_slack.answered(CHANNEL, parent))
    # In the thread, as a reply there would be answered (the same conversation).
    assert "35 days" in answer.markdown
    [read] = fake_slack.ok_calls("conversations.replies")
    assert (read.args["ts"], str(read.args["limit"])) == (parent, "1")
    shown = "\n".join(request_text(r) for r in fake_llm.chat_requests)
    assert REPLY in shown and f"(The thread starts with: {CUSTOMER})" in shown


def recorded_usage(path: Path) -> SqliteUsageStore:
    """Three questions this week, 1,500 tokens in all."""
    store = SqliteUsageStore(path)
    for i, tokens in enumerate((300, 500, 700)):
        turn = Turn(f"question {i}", platform="slack", workspace=TEAM, channel="C0X",
                    thread_root=f"17000000{i}.000100", user=BOB)  # fmt: skip
        usage = Usage(prompt_tokens=tokens - 100, completion_tokens=100)
        final = Final(answer="…", mode="llm", usage=usage)
        now = time.time()
        store.add(usage_rows(turn, final, now), [asked(turn, final, now)])
    return store


async def test_app_home_shows_the_weeks_usage_to_admins_only(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake_slack.admins.add(ALICE)
    usage = recorded_usage(tmp_path / "usage.sqlite")
    try:
        async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
            slack.services.usage = usage
            for user in (ALICE, BOB):
                event = {"type": "app_home_opened", "user": user, "channel": DM, "tab": "home"}
                assert await slack.event(event) == 200
            views = await until(lambda: fake_slack.views if len(fake_slack.views) == 2 else None)
    finally:
        usage.close()
    admin = "\n".join(b["text"]["text"] for b in views[ALICE]["blocks"])
    member = "\n".join(b["text"]["text"] for b in views[BOB]["blocks"])
    assert "*This week (admins)*: 3 questions, 1500 tokens" in admin
    assert "This week" not in member and "1500" not in member
    assert "question 2" in member  # Bob's own recent questions, from the same store


async def test_app_home_lists_the_questions_the_documents_did_not_answer(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    """Asked in a channel, not covered: the answer says so over its closest passages, and
    an admin's App Home lists the question under the document those passages came from,
    linked to its thread."""
    fake_slack.admins.add(ALICE)
    usage = SqliteUsageStore(tmp_path / "usage.sqlite")
    try:
        async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
            slack.services.usage = usage
            slack.services.run = run = observed(slack.services.run, [usage.record])
            asked = await slack.mention(NOT_COVERED, channel=GENERAL, user=BOB)
            (answer,) = await until(lambda: fake_slack.answered(GENERAL, asked["ts"]))
            await run.drain()
            event = {"type": "app_home_opened", "user": ALICE, "channel": DM, "tab": "home"}
            assert await slack.event(event) == 200
            view = await until(lambda: fake_slack.views.get(ALICE))
        [uncovered] = await usage.uncovered()
        assert uncovered.topic, uncovered  # a document title
    finally:
        usage.close()
    assert any("Not covered by the documents" in t for t in answer.block_texts())
    home = "\n".join(b["text"]["text"] for b in view["blocks"])
    assert "*Questions without an answer* (not in the documents, or 👎), by topic" in home
    link = f"https://slack.com/archives/{GENERAL}/p{asked['ts'].replace('.', '')}"
    assert f"*{uncovered.topic}* (1)\n• <{link}|{NOT_COVERED}>" in home, home
