"""The discord kind against the fake Discord's REST API over real HTTP: forum posts
(active and archived) and a text channel's days with message links, only moved threads
read again, deletions, a private forum's scope, 429s waited out, named tokens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.retrieval.knowledge_base import KnowledgeBase
from agent.sources.registry import KindRegistry, default_registry
from bots.chat_sources import register_chat_kinds
from bots.settings import Settings
from tests.fakes.discord_history import delete_thread, forum, post, write
from tests.fakes.discord_payloads import TOKEN
from tests.fakes.discord_server import ALICE, BOB, GENERAL, GUILD_ID, FakeDiscord
from tests.support.sources_support import add, counts, found, reasons, source_sync

ENV = {"DISCORD_TOKEN": TOKEN}
MESSAGES = "GET /channels/{channel_id}/messages"


@pytest.fixture
def fake() -> Iterator[FakeDiscord]:
    fake = FakeDiscord().start()
    yield fake
    fake.stop()


def registry(fake: FakeDiscord, tmp: Path) -> KindRegistry:
    settings = Settings(data_dir=tmp / "data", DISCORD_API_BASE=fake.api_base)
    kinds = default_registry()
    register_chat_kinds(kinds, settings)
    return kinds


def read_channels(fake: FakeDiscord) -> list[str]:
    return [c.path.split("/")[-2] for c in fake.calls_to(MESSAGES)]


def test_forum_posts_load_with_links_and_only_moved_posts_are_read_again(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeDiscord
) -> None:
    board = forum(fake, GUILD_ID, "help")
    vpn = post(fake, board, "VPN drops", ALICE, "My VPN drops every hour.",
               "Switch the HERON-7 gateway to TCP mode.")  # fmt: skip
    old = post(fake, board, "연차 신청", BOB, "연차는 인사 포털에서 신청하고 팀장 승인을 받습니다.",
               archived=True)  # fmt: skip
    with source_sync(kb, tmp_path, env=ENV, registry=registry(fake, tmp_path)) as sync:
        add(sync, "help", "discord", str(board), allow_private=True)
        first = sync.sync("help")
        assert first.ok, first.error
        assert counts(first) == {"added": 2}
        first_message = read_messages(fake, vpn)[0]
        link = f"https://discord.com/channels/{GUILD_ID}/{vpn}/{first_message}"
        assert link in found(kb, "VPN keeps dropping gateway mode")
        assert "인사 포털" in found(kb, "연차 신청은 어디서 하나요?")

        fake.calls.clear()
        write(fake, vpn, BOB, "That fixed it for me too.")
        second = sync.sync("help")
    assert counts(second) == {"updated": 1, "unchanged": 1}
    assert read_channels(fake) == [str(vpn)] and str(old) not in read_channels(fake)


def read_messages(fake: FakeDiscord, channel: int) -> list[int]:
    return [int(m["id"]) for m in fake.channel_messages(channel)]


def test_a_text_channels_days_and_threads_and_deletions(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeDiscord
) -> None:
    write(fake, GENERAL, ALICE, "Standup moves to 10:30 on Mondays.")
    thread = post(fake, GENERAL, "Deploys", BOB, "Deploys run through the CORVINA pipeline.")
    with source_sync(kb, tmp_path, env=ENV, registry=registry(fake, tmp_path)) as sync:
        add(sync, "general", "discord", str(GENERAL), allow_private=True)
        assert counts(sync.sync("general")) == {"added": 2}
        assert f"channels/{GUILD_ID}/{GENERAL}/" in found(kb, "when is standup")
        delete_thread(fake, thread)
        second = sync.sync("general")
    assert counts(second) == {"removed": 1, "unchanged": 1}
    assert "CORVINA" not in found(kb, "which pipeline do deploys run through")


def test_a_private_forum_gets_a_scope_of_its_own(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeDiscord
) -> None:
    board = forum(fake, GUILD_ID, "leadership", private=True)
    post(fake, board, "Reorg", ALICE, "The reorg plan is code-named OSPREY.")
    with source_sync(kb, tmp_path, env=ENV, registry=registry(fake, tmp_path)) as sync:
        add(sync, "leads", "discord", str(board), allow_private=True)
        assert sync.sync("leads").ok
    assert "OSPREY" not in found(kb, "reorg plan code name", frozenset({"public"}))
    assert "OSPREY" in found(kb, "reorg plan code name", frozenset({f"discord-{board}"}))


def test_a_rate_limit_is_waited_out_and_failures_name_the_cause(
    kb: KnowledgeBase, tmp_path: Path, fake: FakeDiscord
) -> None:
    board = forum(fake, GUILD_ID, "help")
    post(fake, board, "VPN drops", ALICE, "Switch the HERON-7 gateway to TCP mode.")
    fake.fail(MESSAGES, status=429, retry_after=0.3, message="You are being rate limited.")
    with source_sync(kb, tmp_path, env=ENV, registry=registry(fake, tmp_path)) as sync:
        add(sync, "help", "discord", str(board), allow_private=True)
        add(sync, "gone", "discord", "123456789", allow_private=True)
        limited, gone = sync.sync("help"), sync.sync("gone")
    assert limited.ok and counts(limited) == {"added": 1}, reasons(limited)
    refused, answered = fake.calls_to(MESSAGES)[:2]
    assert refused.status == 429 and answered.at - refused.at >= 0.3
    assert "Discord knows no channel 123456789 (HTTP 404" in (gone.error or "")
    with source_sync(kb, tmp_path, env={}, registry=registry(fake, tmp_path)) as sync:
        unset = sync.sync("help")
    assert unset.error == (
        "DISCORD_TOKEN is not set: export the Discord bot token where the sync runs, or pass "
        "--token-env NAME to use another variable"
    )
