"""``teamrag usage`` and ``teamrag feedback`` as a team runs them: on the local files, on the
shared Redis, and with a Redis that cannot be reached."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from typer.testing import CliRunner

from adapters.chat.feedback import AnswerRecord, SqliteFeedbackStore
from adapters.chat.feedback_redis import RedisFeedbackStore
from adapters.chat.usage import SqliteUsageStore, UsageStore, day_of
from adapters.chat.usage_redis import RedisUsageStore
from agent.coordination.redis_connection import RedisConnection
from agent.events import Citation, Final, Turn, Usage
from bots.cli import app
from tests.support.servers import free_port

runner = CliRunner()
SEOUL = ZoneInfo("Asia/Seoul")  # the team's zone (TEAMRAG_TIMEZONE), set for every test here
ASKER = Turn("Postgres 백업은 며칠 보관되나요?", platform="slack", workspace="T1", user="U1")
OTHER = Turn("How do I rotate keys?", platform="discord", workspace="G1", user="U2")
RAG = Final(
    "Postgres 백업은 35일 동안 보관됩니다 [1].",
    sources=[Citation(1, "운영 가이드", "samples/kb/ops.md", "백업", "https://wiki/ops")],
    mode="llm",
    usage=Usage(1300, 240),
    usage_by_model={"gpt-4o-mini": Usage(1000, 40), "gpt-4o": Usage(300, 200)},
)
CACHED = Final("Postgres 백업은 35일 동안 보관됩니다 [1].", route="cached", cached=True)


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("REDIS_URL", "DATABASE_URL", "CHROMA_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEAMRAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TEAMRAG_TIMEZONE", "Asia/Seoul")
    monkeypatch.chdir(tmp_path)  # no stray .env from the developer's folder
    return tmp_path / "data"


async def record_usage(store: UsageStore) -> None:
    await store.record(ASKER, RAG)
    await store.record(ASKER, CACHED)
    await store.record(OTHER, RAG)


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.split("│") if cell.strip()]


def json_lines(output: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in output.splitlines() if line.strip()]


def test_usage_table_from_the_local_file(data_dir: Path, tmp_path: Path) -> None:
    store = SqliteUsageStore(data_dir / "usage.sqlite", zone=SEOUL)
    asyncio.run(record_usage(store))
    store.close()
    shown = subprocess.run(
        [sys.executable, "-m", "bots", "usage", "--days", "1"],
        env={**os.environ, "TEAMRAG_DATA_DIR": str(data_dir), "COLUMNS": "160"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    today = day_of(time.time(), SEOUL)
    gpt4o = next(line for line in lines if "slack:T1:U1" in line and "gpt-4o " in line)
    assert today in gpt4o and cells(gpt4o)[-4:] == ["1", "300", "200", "500"]
    cached = next(line for line in lines if "(cache)" in line)
    assert cells(cached)[-4:] == ["1", "0", "0", "0"]
    total = next(line for line in lines if "total" in line and "2 users" in line)
    # Three turns; tokens of the two RAG turns.
    assert cells(total)[-4:] == ["3", "2,600", "480", "3,080"]


def test_usage_json_filters_and_questions(data_dir: Path) -> None:
    store = SqliteUsageStore(data_dir / "usage.sqlite", zone=SEOUL)
    asyncio.run(record_usage(store))
    store.close()

    rows = json_lines(runner.invoke(app, ["usage", "--json"]).output)
    assert len(rows) == 5
    assert sum(int(str(r["requests"])) for r in rows) == 3
    mini = next(r for r in rows if r["user"] == "discord:G1:U2" and r["model"] == "gpt-4o-mini")
    assert mini == {
        "day": day_of(time.time(), SEOUL),
        "user": "discord:G1:U2",
        "model": "gpt-4o-mini",
        "requests": 0,
        "prompt_tokens": 1000,
        "completion_tokens": 40,
        "total_tokens": 1040,
    }
    mine = json_lines(runner.invoke(app, ["usage", "--json", "--user", "slack:T1:U1"]).output)
    assert {r["model"] for r in mine} == {"gpt-4o", "gpt-4o-mini", "(cache)"}

    asked = runner.invoke(app, ["usage", "--questions", "slack:T1:U1", "--json"])
    assert [(q["text"], q["route"], q["cached"]) for q in json_lines(asked.output)] == [
        (ASKER.text, "cached", True),
        (ASKER.text, "knowledge", False),
    ]
    table = runner.invoke(app, ["usage", "--questions", "slack:T1:U1"])
    assert table.exit_code == 0 and "cached" in table.output

    none = runner.invoke(app, ["usage", "--questions", "slack:T1:nobody"])
    assert none.exit_code == 0 and "No questions recorded for slack:T1:nobody" in none.output
    wrong = runner.invoke(app, ["usage", "--days", "0"])
    assert wrong.exit_code == 2


@pytest.mark.parametrize("option", ["--user", "--questions"])
def test_usage_for_a_bare_name_says_what_a_user_key_is(data_dir: Path, option: str) -> None:
    """An HTTP account's records are under http:http:NAME: "minji" alone matched nothing and
    the report said no usage was recorded."""
    shown = runner.invoke(app, ["usage", option, "minji"])
    assert shown.exit_code == 2
    assert "platform:workspace:user" in shown.output and "http:http:NAME" in shown.output


def test_usage_on_an_empty_data_folder(data_dir: Path) -> None:
    shown = runner.invoke(app, ["usage"])
    assert shown.exit_code == 0
    assert "No usage recorded in the last 7 days" in shown.output


async def _shared_records(url: str, worker_folder: Path) -> None:
    """What the bots wrote to Redis (default prefix, as the bots and the CLI use)."""
    redis = RedisConnection(url)
    try:
        usage = RedisUsageStore(redis, SqliteUsageStore(worker_folder / "usage.sqlite"))
        await record_usage(usage)
        usage.close()
        feedback = RedisFeedbackStore(redis, SqliteFeedbackStore(worker_folder / "fb.sqlite"))
        answer_id = await feedback.remember(AnswerRecord.of(ASKER, RAG))
        await feedback.rate(answer_id, "U-voter", "down")
        feedback.close()
    finally:
        await redis.aclose()


def test_usage_and_feedback_read_the_shared_redis(
    data_dir: Path, redis_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The CLI's own data folder is empty: every row comes from Redis."""
    asyncio.run(_shared_records(redis_url, tmp_path / "worker"))
    monkeypatch.setenv("REDIS_URL", redis_url)

    usage = runner.invoke(app, ["usage", "--json"])
    assert usage.exit_code == 0, usage.output
    rows = json_lines(usage.output)
    assert {(r["user"], r["model"], r["requests"]) for r in rows} == {
        ("slack:T1:U1", "gpt-4o", 1),
        ("slack:T1:U1", "gpt-4o-mini", 0),
        ("slack:T1:U1", "(cache)", 1),
        ("discord:G1:U2", "gpt-4o", 1),
        ("discord:G1:U2", "gpt-4o-mini", 0),
    }
    asked = json_lines(
        runner.invoke(app, ["usage", "--questions", "discord:G1:U2", "--json"]).output
    )
    assert [q["text"] for q in asked] == [OTHER.text]

    votes = runner.invoke(app, ["feedback", "--json"])
    assert votes.exit_code == 0, votes.output
    [vote] = json_lines(votes.output)
    assert (vote["rating"], vote["voter"], vote["question"]) == ("down", "U-voter", ASKER.text)
    assert vote["answer"] == RAG.answer and vote["sources"][0]["link"] == "https://wiki/ops"  # type: ignore[index]
    shown = runner.invoke(app, ["feedback"])
    assert shown.exit_code == 0 and ASKER.text in shown.output and RAG.answer in shown.output
    assert runner.invoke(app, ["feedback", "--show", "up", "--json"]).output == ""


@pytest.mark.parametrize(
    "command", [["usage"], ["feedback"], ["usage", "--questions", "slack:T1:U1"]]
)
def test_an_unreachable_redis_is_one_line_and_exit_1(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"
    monkeypatch.setenv("REDIS_URL", url)
    result = runner.invoke(app, command)
    assert result.exit_code == 1
    [line] = result.output.strip().splitlines()
    assert line.startswith(f"error: REDIS_URL {url} unreachable: ")
    assert "start Redis there, or unset REDIS_URL" in line
