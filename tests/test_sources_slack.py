"""The slack kind against the fake Slack over real HTTP, driven by slack_sdk: threads and
days with permalinks, only changed threads read again, deletions, the channel's scope
(a private channel's history never answers elsewhere), 429s waited out, named tokens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.chat.channels import load_channel_rules
from agent.events import Turn
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.sources.base import SourceSpec
from agent.sources.registry import KindRegistry, default_registry
from bots.chat_sources import register_chat_kinds
from bots.settings import Settings
from tests.fakes.slack_server import BOT_TOKEN, FakeSlack
from tests.support.agent_support import agent, collect
from tests.support.format_files import hwpx_bytes, xlsx_bytes
from tests.support.slack_support import CHANNEL, slack_bot, until
from tests.support.sources_support import add, counts, found, reasons, source_sync

SECRET = "G0SECRET"
ENV = {"SLACK_BOT_TOKEN": BOT_TOKEN}
ARCHIVES = "https://teamrag-test.slack.com/archives"
RULES = f'[channels.{SECRET}]\nfollow_ups = true\n[channels.C0ENG]\nscopes = ["engineering"]\n'


@pytest.fixture
def fake() -> Iterator[FakeSlack]:
    fake = FakeSlack().start()
    fake.add_channel(CHANNEL, "general")
    fake.add_channel(SECRET, "salaries", private=True)
    yield fake
    fake.stop()


def registry(fake: FakeSlack, tmp: Path, rules: str = RULES) -> KindRegistry:
    settings = Settings(data_dir=tmp / "data", SLACK_API_URL=fake.base_url, channels=rules)
    kinds = default_registry()
    register_chat_kinds(kinds, settings)
    return kinds


def history_calls(fake: FakeSlack, method: str) -> list[Any]:
    return fake.ok_calls(method)


def test_threads_and_days_load_with_permalinks_and_only_changes_are_read_again(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeSlack
) -> None:
    root = fake.post_history(CHANNEL, "How do we rotate the staging database password?")
    fake.post_history(CHANNEL, "Run the KESTREL rotation job, then restart the API.",
                      thread_ts=root)  # fmt: skip
    korean = fake.post_history(CHANNEL, "점심 회식은 금요일 12시에 판교 본사 3층입니다.", day=1)
    fake.post_history(CHANNEL, "다음 주 회식 장소는 추후 공지합니다.", thread_ts=korean)
    fake.post_history(CHANNEL, "Standup moves to 10:30 on Mondays.", day=2)
    fake.post_history(
        CHANNEL, "An answer the bot posted.", day=2, bot_id="B1", subtype="bot_message"
    )
    with source_sync(kb, tmp_path, env=ENV, registry=registry(fake, tmp_path)) as sync:
        add(sync, "general", "slack", CHANNEL, allow_private=True)
        first = sync.sync("general")
        assert first.ok, first.error
        assert counts(first) == {"added": 3}  # two threads, one day
        thread_link = f"{ARCHIVES}/{CHANNEL}/p{root.replace('.', '')}"
        assert thread_link in found(kb, "how to rotate the staging database password")
        assert "판교" in found(kb, "회식 장소는 어디인가요?", frozenset({"public"}))
        assert "bot posted" not in found(kb, "answer the bot posted")

        fake.reset()
        fake.post_history(CHANNEL, "Also rotate the read replica's password.", thread_ts=root)
        fake.post_history(CHANNEL, "Deploy freeze starts Thursday.", day=3)
        second = sync.sync("general")
    assert counts(second) == {"updated": 1, "unchanged": 2, "added": 1}
    replies = history_calls(fake, "conversations.replies")
    assert [c.args["ts"] for c in replies] == [root]  # only the thread that moved
    assert len(history_calls(fake, "conversations.history")) == 1


def test_attachments_posted_in_the_channel_go_in_with_attachments_on(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeSlack
) -> None:
    """Files people post (HWPX, XLSX): each one document in the channel's scope, read again
    only when it changes; screenshots are not listed; without --attachments, nothing."""
    sheet = fake.share_file("F0SHEET", "servers.xlsx", "application/vnd.openxmlformats-"
                            "officedocument.spreadsheetml.sheet", xlsx_bytes())  # fmt: skip
    rules = fake.share_file("F0RULES", "규정.hwpx", "application/haansofthwpx", hwpx_bytes())
    shot = fake.share_file("F0SHOT", "screenshot.png", "image/png", b"\x89PNG")
    fake.post_history(CHANNEL, "서버 목록과 보안 규정입니다", subtype="file_share",
                      files=[sheet, rules, shot])  # fmt: skip
    with source_sync(kb, tmp_path, env=ENV, registry=registry(fake, tmp_path)) as sync:
        add(sync, "plain", "slack", CHANNEL, allow_private=True)
        assert counts(sync.sync("plain")) == {"added": 1}  # the day's messages only
        add(sync, "general", "slack", CHANNEL, allow_private=True, attachments=True)
        first = sync.sync("general")
        # the two files; the day is the one the first source loaded already
        assert counts(first) == {"added": 2, "unchanged": 1}, reasons(first)
        assert sorted(fake.downloads) == ["F0RULES", "F0SHEET"]
        top = kb.search("비밀번호 길이 기준", SearchOptions(k=1))[0].chunk
        assert top.locator() == "section 1 > 보안 규정 > 계정"
        assert top.link == rules["permalink"] and top.scope == "public"
        fake.downloads.clear()
        again = sync.sync("general")
    assert counts(again) == {"unchanged": 3} and fake.downloads == []


async def test_a_deleted_thread_is_no_longer_cited(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeSlack
) -> None:
    root = fake.post_history(CHANNEL, "Where do production deploys run?")
    fake.post_history(CHANNEL, "Deploys run through the CORVINA pipeline.", thread_ts=root)
    fake.post_history(CHANNEL, "The office wifi is called TEAMRAG-GUEST.", day=1)
    turn = Turn(text="Which pipeline do production deploys run through?", thread_root="t1")
    forgotten: list[str] = []
    with source_sync(kb, tmp_path, env=ENV, registry=registry(fake, tmp_path),
                     forget=forgotten.extend) as sync:  # fmt: skip
        add(sync, "general", "slack", CHANNEL, allow_private=True)
        assert sync.sync("general").ok
        async with agent(kb, tmp_path / "agent") as runner:
            _, before = await collect(runner, turn)
            link = f"{ARCHIVES}/{CHANNEL}/p{root.replace('.', '')}"
            assert any(s.link == link for s in before.sources)
            fake.delete_thread(CHANNEL, root)
            outcome = sync.sync("general")
            assert counts(outcome) == {"removed": 1, "unchanged": 1}
            _, after = await collect(runner, Turn(text=turn.text, thread_root="t2"))
    assert all(s.link != link for s in after.sources)
    assert "CORVINA" not in after.answer
    assert len(forgotten) == 1


async def test_a_private_channels_history_answers_only_where_its_scope_is_named(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeSlack
) -> None:
    fake.post_history(SECRET, "Salary bands for 2027 are in the PLOVER sheet.")
    with source_sync(kb, tmp_path, env=ENV, registry=registry(fake, tmp_path)) as sync:
        add(sync, "salaries", "slack", SECRET, allow_private=True)
        assert sync.sync("salaries").ok
    assert "PLOVER" in found(kb, "salary bands sheet", frozenset({"slack-g0secret"}))
    assert "PLOVER" not in found(kb, "salary bands sheet", frozenset({"public", "engineering"}))
    # Asked in another channel, through the real bot with the rules as the bots load them.
    rules = load_channel_rules(None, RULES).with_default_scope("public")
    async with slack_bot(fake, kb, tmp_path / "bot", rules=rules) as slack:
        asked = await slack.mention("Where are the salary bands?")
        answer = await until(lambda: fake.answered(CHANNEL, asked["ts"]), what="an answer")
    shown = " ".join(m.markdown + " ".join(m.block_texts()) for m in answer)
    assert "PLOVER" not in shown and "archives/G0SECRET" not in shown


def test_a_private_channel_named_only_by_its_own_rule_uses_that_scope(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeSlack
) -> None:
    fake.post_history(SECRET, "Salary bands for 2027 are in the PLOVER sheet.")
    rules = RULES.replace("follow_ups = true", 'scopes = ["hr"]')
    with source_sync(kb, tmp_path, env=ENV, registry=registry(fake, tmp_path, rules)) as sync:
        add(sync, "salaries", "slack", SECRET, allow_private=True)
        add(sync, "eng", "slack", "C0ENG", allow_private=True)
        fake.add_channel("C0ENG", "engineering")
        assert sync.sync("salaries").ok
        assert sync.sync("eng").ok
        state = sync.store.get("salaries")
    assert "PLOVER" in found(kb, "salary bands sheet", frozenset({"hr"}))
    assert state is not None and state.checkpoint["scope"] == "hr"


def test_a_public_channel_with_several_scopes_needs_a_choice(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeSlack
) -> None:
    rules = f'[channels.{CHANNEL}]\nscopes = ["engineering", "public"]\n'
    fake.post_history(CHANNEL, "Standup is at ten.")
    with source_sync(kb, tmp_path, env=ENV, registry=registry(fake, tmp_path, rules)) as sync:
        add(sync, "general", "slack", CHANNEL, allow_private=True)
        # As `teamrag sources add slack C0GENERAL --scope engineering` stores it.
        options = {"scope": "engineering"}
        sync.store.add(SourceSpec("chosen", "slack", CHANNEL, "engineering", 60, options, True))
        unsure, chosen = sync.sync("general"), sync.sync("chosen")
    assert "several scopes (engineering, public): pass --scope" in (unsure.error or "")
    assert chosen.ok and "Standup" in found(kb, "when is standup", frozenset({"engineering"}))


def test_a_rate_limit_is_waited_out(kb: KnowledgeBase, tmp_path: Path, fake: FakeSlack) -> None:
    root = fake.post_history(CHANNEL, "Who owns the billing service?")
    fake.post_history(CHANNEL, "The PAYMENTS team owns billing.", thread_ts=root)
    fake.fail("conversations.replies", status=429, retry_after=1)
    with source_sync(kb, tmp_path, env=ENV, registry=registry(fake, tmp_path)) as sync:
        add(sync, "general", "slack", CHANNEL, allow_private=True)
        outcome = sync.sync("general")
    assert outcome.ok and counts(outcome) == {"added": 1}, reasons(outcome)
    limited, answered = fake.calls_to("conversations.replies")
    assert limited.status == 429 and answered.at - limited.at >= 1.0


def test_failures_name_the_variable_and_the_fix(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeSlack
) -> None:
    root = fake.post_history(CHANNEL, "Who owns the billing service?")
    fake.post_history(CHANNEL, "The PAYMENTS team owns billing.", thread_ts=root)
    kinds = registry(fake, tmp_path)
    with source_sync(kb, tmp_path, env={"OTHER": "xoxb-wrong"}, registry=kinds) as sync:
        add(sync, "unset", "slack", CHANNEL, allow_private=True)
        add(sync, "wrong", "slack", CHANNEL, token_env="OTHER", allow_private=True)
        add(sync, "missing", "slack", "C0NOPE", token_env="OTHER", allow_private=True)
        unset, wrong = sync.sync("unset"), sync.sync("wrong")
    assert unset.error == (
        "SLACK_BOT_TOKEN is not set: export the Slack bot token (xoxb-...) where the sync "
        "runs, or pass --token-env NAME to use another variable"
    )
    assert wrong.error == (
        f"Slack refused channel {CHANNEL} (invalid_auth): put a valid bot token (xoxb-...) in OTHER"
    )
    with source_sync(kb, tmp_path, env=ENV, registry=kinds) as sync:
        sync.store.delete("missing")
        add(sync, "missing", "slack", "C0NOPE", allow_private=True)
        missing = sync.sync("missing")
        fake.fail("conversations.replies", "internal_error")
        add(sync, "flaky", "slack", CHANNEL, allow_private=True)
        flaky = sync.sync("flaky")
    assert "(channel_not_found): check the channel id" in (missing.error or "")
    assert flaky.ok and counts(flaky) == {"failed": 1}  # that thread only; tried next time
    assert "internal_error" in next(iter(reasons(flaky).values()))
