"""A file shared with ``@teamrag`` is learned: the real Bolt app gets an ``app_mention``
carrying files, downloads them from the fake Slack with the bot token, ingests them into
the channel's scope and says what it learned (in Korean to a Korean message); a question
in that channel then cites the file. Unsupported and too large files get the reason."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from tests.fakes.slack_server import BOT_USER, FakeSlack
from tests.support.format_files import hwpx_bytes, pptx_bytes, xlsx_bytes
from tests.support.slack_support import CHANNEL, SlackHarness, slack_bot, until
from tests.support.sources_support import found

SECRET = "G0SECRET"
PERMALINK = "https://teamrag-test.slack.com/files/U0ALICE"


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    fake.add_channel(CHANNEL, "general")
    fake.add_channel(SECRET, "leads", private=True)
    yield fake
    fake.stop()


async def share(
    slack: SlackHarness, text: str, files: list[dict[str, Any]], *, channel: str = CHANNEL
) -> str:
    """``@teamrag text`` with files, as Slack sends it; returns the message ts."""
    message = slack.user_message(f"<@{BOT_USER}> {text}", channel=channel, files=files,
                                 subtype="file_share")  # fmt: skip
    mention = {k: v for k, v in message.items() if k not in ("channel_type", "subtype")}
    assert await slack.event(mention | {"type": "app_mention"}) == 200
    return str(message["ts"])


async def reply_in(fake: FakeSlack, channel: str, ts: str) -> str:
    replies = await until(lambda: fake.replies(channel, ts), what="the bot's reply")
    return replies[0].text


async def test_a_shared_file_is_learned_into_the_channels_scope_and_then_cited(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeSlack
) -> None:
    text = b"# Failover\n\nFail over the primary with the PETREL script.\n"
    runbook = fake.share_file("F0RUNBOOK", "runbook.md", "text/markdown", text)
    async with slack_bot(fake, kb, tmp_path) as slack:
        ts = await share(slack, "please learn this", [runbook])
        assert await reply_in(fake, CHANNEL, ts) == (
            "Learned runbook.md: 1 passages, scope public."
        )
        assert fake.downloads == ["F0RUNBOOK"]
        asked = await slack.mention("How do we fail over the primary?")
        answer = await until(lambda: fake.answered(CHANNEL, asked["ts"]), what="an answer")
    shown = " ".join(m.markdown + " ".join(m.block_texts()) for m in answer)
    assert "PETREL" in shown and f"{PERMALINK}/F0RUNBOOK/runbook.md" in shown


async def test_korean_replies_unsupported_and_too_large_files_say_why(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("adapters.slack.files.MAX_BYTES", 1024 * 1024)
    memo = fake.share_file("F0MEMO", "회의록.txt", "text/plain",
                           "다음 분기 목표는 결제 오류율 절반 감소입니다.".encode())  # fmt: skip
    photo = fake.share_file("F0PHOTO", "whiteboard.png", "image/png", b"\x89PNG")
    huge = fake.share_file("F0HUGE", "dump.txt", "text/plain", b"x" * (2 * 1024 * 1024))
    async with slack_bot(fake, kb, tmp_path) as slack:
        korean = await share(slack, "이 파일 배워줘", [memo], channel=SECRET)
        said = await reply_in(fake, SECRET, korean)
        english = await share(slack, "learn these", [photo, huge])
        refused = await reply_in(fake, CHANNEL, english)
    assert said == "회의록.txt 내용을 배웠습니다: 1개 단락, 범위 slack-g0secret."
    assert "결제 오류율" in found(kb, "다음 분기 목표", frozenset({"slack-g0secret"}))
    assert "결제 오류율" not in found(kb, "다음 분기 목표", frozenset({"public"}))
    assert refused.splitlines() == [
        "Cannot learn whiteboard.png: teamrag reads csv, docx, htm, html, hwp, hwpx, markdown, "
        "md, pdf, pptx, rst, text, tsv, txt, xlsx files.",
        "Cannot learn dump.txt: it is 2.0 MB, over the 1 MB limit.",
    ]
    assert fake.downloads == ["F0MEMO"]  # the refused files were never downloaded


async def test_hancom_excel_and_powerpoint_files_are_learned_and_cited_where_they_say(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeSlack
) -> None:
    shared = [
        fake.share_file("F0HWPX", "규정.hwpx", "application/haansofthwpx", hwpx_bytes()),
        fake.share_file("F0XLSX", "servers.xlsx", "application/vnd.openxmlformats-"
                        "officedocument.spreadsheetml.sheet", xlsx_bytes()),
        fake.share_file("F0PPTX", "review.pptx", "application/vnd.openxmlformats-"
                        "officedocument.presentationml.presentation", pptx_bytes()),
    ]  # fmt: skip
    async with slack_bot(fake, kb, tmp_path) as slack:
        said = await reply_in(fake, CHANNEL, await share(slack, "이 파일들 배워줘", shared))
    lines = said.splitlines()
    assert [line.split(" 내용을 배웠습니다")[0] for line in lines] == [
        "규정.hwpx", "servers.xlsx", "review.pptx"
    ], said  # fmt: skip
    top = kb.search("3분기 매출", SearchOptions(k=1))[0].chunk
    assert top.locator() == "slide 1 > 분기 실적" and top.link == f"{PERMALINK}/F0PPTX/review.pptx"


async def test_a_channel_without_a_single_scope_learns_nothing_and_says_why(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeSlack
) -> None:
    from adapters.chat.channels import load_channel_rules

    rules = load_channel_rules(None, f'[channels.{CHANNEL}]\nscopes = ["a", "b"]\n')
    memo = fake.share_file("F0MEMO", "memo.md", "text/markdown", b"The answer is 42.")
    async with slack_bot(fake, kb, tmp_path, rules=rules) as slack:
        said = await reply_in(fake, CHANNEL, await share(slack, "learn", [memo]))
    assert said.startswith("Cannot learn files here: channel C0GENERAL may search several scopes")
    assert fake.downloads == []
