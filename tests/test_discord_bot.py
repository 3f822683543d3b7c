"""``teamrag discord``: settings checks, and serve_discord against the fake Discord (command
sync to a guild, sharding, running without the MESSAGE_CONTENT intent, clean shutdown)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.chat.services import ChatServices
from agent.retrieval.knowledge_base import KnowledgeBase
from bots.discord_bot import check_discord_settings, discord_options, serve_discord
from bots.settings import BotConfigError, Settings
from tests.fakes.discord_payloads import BOT_ID, MESSAGE_CONTENT_INTENT, TOKEN
from tests.fakes.discord_rest import GLOBAL_COMMANDS, GUILD_COMMANDS
from tests.fakes.discord_server import GENERAL, GUILD_ID, OTHER_GENERAL, FakeDiscord
from tests.support.chat_support import chat_services
from tests.support.discord_support import has_feedback, until

BACKUPS = "How long are Postgres backups kept?"


def settings_for(fake: FakeDiscord | None, folder: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {"data_dir": folder / "data", "DISCORD_TOKEN": TOKEN}
    if fake is not None:
        values |= {"DISCORD_API_BASE": fake.api_base, "DISCORD_GATEWAY_URL": fake.gateway_url}
    return Settings(**(values | overrides))


@asynccontextmanager
async def serving(settings: Settings, services: ChatServices) -> AsyncIterator[asyncio.Task[None]]:
    # A short wait for GUILD_CREATEs: discord.py's wait (2 s by default) outlives a short
    # test and then dispatches on_ready on a closed client.
    task = asyncio.create_task(
        serve_discord(settings, services, client_options={"guild_ready_timeout": 0.05})
    )
    try:
        yield task
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def answered(fake: FakeDiscord, interaction: int) -> dict[str, Any]:
    return await until(
        lambda: (m := fake.original(interaction)) is not None and has_feedback(m) and m,
        "the answer",
    )


def test_a_missing_token_says_which_variable_and_where_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(BotConfigError) as error:
        check_discord_settings(settings_for(None, tmp_path, DISCORD_TOKEN=None))
    assert "DISCORD_TOKEN" in str(error.value)
    assert "https://discord.com/developers/applications" in str(error.value)


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"discord_shard_ids": [0, 1]}, "TEAMRAG_DISCORD_SHARD_COUNT"),
        ({"discord_shard_ids": [2], "discord_shard_count": 2}, "TEAMRAG_DISCORD_SHARD_IDS"),
        ({"DISCORD_API_BASE": "discord.com/api/v10"}, "DISCORD_API_BASE"),
        ({"DISCORD_GATEWAY_URL": "http://127.0.0.1:1/gateway"}, "DISCORD_GATEWAY_URL"),
    ],
)
def test_inconsistent_settings_are_named(
    tmp_path: Path, overrides: dict[str, Any], named: str
) -> None:
    with pytest.raises(BotConfigError, match=named):
        check_discord_settings(settings_for(None, tmp_path, **overrides))


def test_settings_become_plain_adapter_options(tmp_path: Path) -> None:
    settings = settings_for(
        None,
        tmp_path,
        discord_allowed_channels=[1, 2],
        discord_allowed_roles=[3],
        discord_guild_id=GUILD_ID,
        discord_shard_count=4,
        discord_shard_ids=[2, 3],
    )
    options = discord_options(settings)
    assert options.allowed_channels == {1, 2} and options.allowed_roles == {3}
    assert options.command_guild_id == GUILD_ID
    assert not options.sync_commands  # the process with shard 0 syncs the commands


async def test_serve_discord_syncs_to_the_guild_answers_and_closes_cleanly(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake = FakeDiscord().start()
    defaults = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    try:
        settings = settings_for(fake, tmp_path, discord_guild_id=GUILD_ID)
        async with chat_services(sample_kb, tmp_path) as services:
            async with serving(settings, services):
                await until(lambda: fake.gateway.ready_shards() == {0}, "the bot to connect")
                await until(lambda: fake.calls_to(GUILD_COMMANDS), "the command sync")
                answer = await answered(fake, await fake.slash(BACKUPS))
            await until(lambda: not fake.gateway.ready_shards(), "the connection to close")
    finally:
        fake.stop()
    assert "35 days" in answer["content"]
    assert not fake.calls_to(GLOBAL_COMMANDS)  # development: this guild only
    [synced] = fake.calls_to(GUILD_COMMANDS)
    assert synced.path.endswith(f"/guilds/{GUILD_ID}/commands")
    ask, menu = synced.body  # /ask and the Ask teamrag message command
    assert (
        ask["name"] == "ask" and ask["description_localizations"]["ko"] == "팀 문서에 대해 질문하기"
    )
    assert (menu["name"], menu["type"]) == ("Ask teamrag", 3)
    assert defaults == (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)  # put back afterwards


async def test_shards_each_carry_their_guilds(sample_kb: KnowledgeBase, tmp_path: Path) -> None:
    fake = FakeDiscord().start()
    try:
        settings = settings_for(fake, tmp_path, discord_shard_count=2)
        async with chat_services(sample_kb, tmp_path) as services, serving(settings, services):
            await until(lambda: fake.gateway.ready_shards() == {0, 1}, "both shards")
            await until(lambda: fake.calls_to(GLOBAL_COMMANDS), "the command sync")
            here = await answered(fake, await fake.slash(BACKUPS, channel=GENERAL))
            there = await answered(fake, await fake.slash(BACKUPS, channel=OTHER_GENERAL))
    finally:
        fake.stop()
    assert sorted(i["shard"] for i in fake.gateway.identifies) == [[0, 2], [1, 2]]
    assert "35 days" in here["content"] and "35 days" in there["content"]


async def test_a_process_running_some_shards_leaves_the_command_sync_to_shard_0(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake = FakeDiscord().start()
    try:
        settings = settings_for(fake, tmp_path, discord_shard_count=2, discord_shard_ids=[1])
        async with chat_services(sample_kb, tmp_path) as services, serving(settings, services):
            await until(lambda: fake.gateway.ready_shards() == {1}, "shard 1")
    finally:
        fake.stop()
    assert [i["shard"] for i in fake.gateway.identifies] == [[1, 2]]
    assert not fake.calls_to(GLOBAL_COMMANDS) and not fake.calls_to(GUILD_COMMANDS)


async def test_without_the_message_content_intent_the_bot_carries_on_without_it(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake = FakeDiscord().start()
    fake.gateway.allow_message_content = False  # not enabled in the developer portal
    try:
        async with (
            chat_services(sample_kb, tmp_path) as services,
            serving(settings_for(fake, tmp_path), services),
        ):
            await until(lambda: fake.gateway.ready_shards(), "the bot to connect")
            asked = await fake.say(f"<@{BOT_ID}> {BACKUPS}")
            thread = await until(lambda: fake.thread_of(asked), "the thread")
            await until(
                lambda: [m for m in fake.bot_messages(int(thread["id"])) if has_feedback(m)],
                "the answer",
            )
    finally:
        fake.stop()
    first, second = fake.gateway.identifies
    assert first["intents"] & MESSAGE_CONTENT_INTENT and fake.gateway.closes == [4014]
    assert not second["intents"] & MESSAGE_CONTENT_INTENT


async def test_a_rejected_token_names_the_variable(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake = FakeDiscord().start()
    try:
        settings = settings_for(fake, tmp_path, DISCORD_TOKEN="not-the-token")
        async with chat_services(sample_kb, tmp_path) as services:
            with pytest.raises(BotConfigError, match="Discord rejected DISCORD_TOKEN"):
                await serve_discord(settings, services)
    finally:
        fake.stop()


async def test_a_refused_guild_sync_names_the_guild_setting(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake = FakeDiscord().start()
    fake.fail(GUILD_COMMANDS, status=403, code=50001, message="Missing Access")
    try:
        settings = settings_for(fake, tmp_path, discord_guild_id=GUILD_ID)
        async with chat_services(sample_kb, tmp_path) as services:
            with pytest.raises(BotConfigError, match="TEAMRAG_DISCORD_GUILD_ID"):
                await serve_discord(settings, services)
    finally:
        fake.stop()


async def test_teamrag_discord_as_a_process_answers_and_stops_cleanly_on_sigterm(
    tmp_path: Path,
) -> None:
    """What ``docker stop`` does to ``teamrag discord``: SIGTERM, then a clean exit 0."""
    fake = FakeDiscord().start()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DISCORD_", "OPENAI_"))},
        "TEAMRAG_DATA_DIR": str(tmp_path / "data"),
        "DISCORD_TOKEN": TOKEN,
        "DISCORD_API_BASE": fake.api_base,
        "DISCORD_GATEWAY_URL": fake.gateway_url,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "bots", "discord"],
        env=env,
        cwd=tmp_path,  # no stray .env
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        await until(
            lambda: (
                process.poll() is not None
                or (fake.calls_to(GLOBAL_COMMANDS) and fake.gateway.ready_shards())
            ),
            "the bot to sync its commands and connect to the gateway",
            timeout=120,
        )
        assert process.poll() is None, process.communicate()[1]
        interaction = await fake.slash("백업은 며칠 보관되나요?", locale="ko")
        await until(lambda: has_feedback(fake.original(interaction)), "the answer")
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
        fake.stop()
    assert process.returncode == 0, stderr
    assert "Stopped." in stderr and "Traceback" not in stderr
