"""``teamrag slack`` itself: the settings it needs, the HTTP server, Socket Mode, and a
stop that lets the answers under way finish."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from typer.testing import CliRunner

from agent.retrieval.knowledge_base import KnowledgeBase
from bots.cli import app as cli
from bots.settings import BotConfigError
from bots.slack_bot import EVENTS_PATH, check_slack_settings, serve_slack
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import APP_TOKEN, BOT_TOKEN, BOT_USER, TEAM, FakeSlack
from tests.support.agent_support import script_answer
from tests.support.chat_support import chat_services
from tests.support.servers import free_port
from tests.support.slack_support import (
    CHANNEL,
    SECRET,
    SlackSender,
    settings_for,
    until,
)

pytest_plugins = ("tests.support.slack_fixtures",)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"SLACK_BOT_TOKEN": None}, "SLACK_BOT_TOKEN is not set"),
        ({"SLACK_BOT_TOKEN": "xoxp-user"}, "starts with xoxb-"),
        ({"SLACK_SIGNING_SECRET": None}, "SLACK_SIGNING_SECRET is not set"),
        ({"SLACK_APP_TOKEN": "xoxb-wrong"}, "SLACK_APP_TOKEN must be an app-level token"),
    ],
)
def test_missing_or_wrong_settings_name_the_variable(
    values: dict[str, Any], message: str, fake_slack: FakeSlack, tmp_path: Path
) -> None:
    with pytest.raises(BotConfigError, match=message):
        check_slack_settings(settings_for(fake_slack, tmp_path, **values))


def test_socket_mode_needs_no_signing_secret(fake_slack: FakeSlack, tmp_path: Path) -> None:
    settings = settings_for(
        fake_slack, tmp_path, SLACK_APP_TOKEN=APP_TOKEN, SLACK_SIGNING_SECRET=None
    )
    check_slack_settings(settings)  # does not raise


def test_the_command_fails_in_one_line_before_starting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env
    result = CliRunner().invoke(cli, ["slack"], env={"TEAMRAG_DATA_DIR": str(tmp_path / "data")})
    assert result.exit_code == 2
    assert "SLACK_BOT_TOKEN is not set" in result.output and "Traceback" not in result.output


def test_an_unreachable_redis_stops_the_bot_at_start_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A team that set REDIS_URL wants shared state: not a silent single-worker bot."""
    monkeypatch.chdir(tmp_path)
    env = {
        "TEAMRAG_DATA_DIR": str(tmp_path / "data"),
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_APP_TOKEN": "",
        "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
    }
    result = CliRunner().invoke(cli, ["slack", "--port", str(free_port())], env=env)
    assert result.exit_code == 1, result.output
    assert "REDIS_URL redis://127.0.0.1:" in result.output and "unreachable" in result.output
    assert "unset REDIS_URL" in result.output and "Traceback" not in result.output


async def _serving(ended: Callable[[], bool], harness: SlackSender) -> None:
    """Wait until the bot answers HTTP (it has no other signal); fail if it ended first."""
    body = json.dumps({"type": "url_verification", "challenge": "up", "token": "x"})

    async def probe() -> bool:
        try:
            return (await harness.post(body, "application/json"))[0] == 200
        except OSError:
            return False

    for _ in range(3000):
        assert not ended(), "the bot stopped before serving"
        if await probe():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the Slack server did not start")


async def test_serve_slack_runs_the_events_api_and_finishes_answers_when_stopped(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_answer(fake_llm, "Ask your team lead; access lasts 14 days [1].")
    fake_llm.latency_s = 0.3  # the answer is still under way when the bot is told to stop
    port = free_port()
    settings = settings_for(fake_slack, tmp_path)
    async with chat_services(sample_kb, tmp_path, llm=fake_llm) as services:
        task = asyncio.create_task(serve_slack(settings, services, port=port, host="127.0.0.1"))
        async with aiohttp.ClientSession() as session:
            harness = SlackSender(fake_slack, f"http://127.0.0.1:{port}{EVENTS_PATH}", session)
            await _serving(task.done, harness)
            asked = await harness.mention("How do I get production access?")
            await until(lambda: fake_slack.calls_to("chat.startStream"))
            task.cancel()  # Ctrl-C
            with pytest.raises(asyncio.CancelledError):
                await task
        # Stopping waited for the answer under way.
        (answer,) = fake_slack.answered(CHANNEL, asked["ts"])
    assert answer.markdown == "Ask your team lead; access lasts 14 days [1]."
    assert (tmp_path / "data" / "slack_threads.sqlite").exists()


async def test_the_events_port_keeps_only_healthz_and_the_ops_port_serves_the_rest(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    """/readyz and /metrics name the data folder and the back-ends: not on the port
    Slack (and so the internet) reaches."""
    port, ops_port = free_port(), free_port()
    settings = settings_for(fake_slack, tmp_path, ops_port=ops_port)
    async with chat_services(sample_kb, tmp_path) as services:
        task = asyncio.create_task(serve_slack(settings, services, port=port, host="127.0.0.1"))
        try:
            async with aiohttp.ClientSession() as session:
                harness = SlackSender(fake_slack, f"http://127.0.0.1:{port}{EVENTS_PATH}", session)
                await _serving(task.done, harness)

                async def status(at: int, path: str) -> int:
                    async with session.get(f"http://127.0.0.1:{at}{path}") as response:
                        return response.status

                assert await status(port, "/healthz") == 200  # load balancers probe it
                for path in ("/readyz", "/metrics"):
                    assert await status(port, path) == 404, path
                    assert await status(ops_port, path) == 200, path
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task


def _envelope(
    kind: str, payload: dict[str, Any], envelope_id: str, retry: int = 0
) -> dict[str, Any]:
    return {
        "envelope_id": envelope_id,
        "type": kind,
        "accepts_response_payload": kind != "events_api",
        "retry_attempt": retry,
        "retry_reason": "timeout" if retry else "",
        "payload": payload,
    }


async def test_socket_mode_answers_events_once_and_acknowledges_commands_with_their_reply(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    settings = settings_for(
        fake_slack, tmp_path, SLACK_APP_TOKEN=APP_TOKEN, SLACK_SIGNING_SECRET=None
    )
    async with chat_services(sample_kb, tmp_path) as services:
        task = asyncio.create_task(serve_slack(settings, services, port=0))
        try:
            await until(lambda: fake_slack.sockets, what="a Socket Mode connection")
            event = {"type": "app_mention", "channel": CHANNEL, "user": "U0ALICE", "team": TEAM,
                     "text": f"<@{BOT_USER}> Postgres 백업은 며칠 동안 보관되나요?",
                     "ts": "1700000000.000042", "client_msg_id": "m-42"}  # fmt: skip
            body = {
                "type": "event_callback",
                "team_id": TEAM,
                "event_id": "EvSOCKET",
                "event": event,
            }
            fake_slack.socket_send(_envelope("events_api", body, "env-1"))
            # Slack redelivers it (after a reconnect, say) under a new envelope.
            fake_slack.socket_send(_envelope("events_api", body, "env-2", retry=1))
            command = {
                "team_id": TEAM,
                "channel_id": CHANNEL,
                "user_id": "U0ALICE",
                "command": "/ask",
                "text": "-p How do I get production access?",
                "trigger_id": "trig-1",
                "response_url": fake_slack.response_url("sock"),
            }
            fake_slack.socket_send(_envelope("slash_commands", command, "env-3"))
            await until(lambda: fake_slack.answered(CHANNEL, "1700000000.000042"))
            await until(lambda: fake_slack.ok_calls("response_url"))
            await until(lambda: len(fake_slack.socket_acks) >= 3)
            acks = list(fake_slack.socket_acks)
            await until(lambda: fake_slack.calls_to("assistant.threads.setStatus")[1:])
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
    assert {a["envelope_id"] for a in acks} == {"env-1", "env-2", "env-3"}  # all acknowledged
    command_ack = next(a for a in acks if a["envelope_id"] == "env-3")
    assert command_ack["payload"] == {"response_type": "ephemeral", "text": "Thinking…"}
    assert len(fake_slack.replies(CHANNEL, "1700000000.000042")) == 1  # answered once
    assert fake_slack.calls_to("apps.connections.open")  # with the app-level token


async def test_teamrag_slack_as_a_process_answers_and_stops_gently_on_sigterm(
    fake_slack: FakeSlack, tmp_path: Path
) -> None:
    """What ``docker stop`` does to ``teamrag slack``: SIGTERM, then a clean exit."""
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_"))},
        "TEAMRAG_DATA_DIR": str(tmp_path / "data"),
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": fake_slack.base_url,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "bots", "slack", "--port", str(port)],
        env=env,
        cwd=tmp_path,  # no stray .env
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        async with aiohttp.ClientSession() as session:
            sender = SlackSender(fake_slack, f"http://127.0.0.1:{port}{EVENTS_PATH}", session)
            await _serving(lambda: process.poll() is not None, sender)
            asked = await sender.mention("How do I get production access?")
            (answer,) = await until(lambda: fake_slack.answered(CHANNEL, asked["ts"]))
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    assert "Slack bot listening on http://0.0.0.0:" in stderr and "Traceback" not in stderr
    assert answer.markdown  # an empty knowledge base still gets an answer that says so
