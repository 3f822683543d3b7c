"""Feedback records: a vote is kept with its question, answer and sources, and listed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from adapters.chat.feedback import AnswerRecord, SqliteFeedbackStore
from agent.events import Final, Source, Turn
from bots.cli import app

TURN = Turn(
    text="Postgres 백업은 며칠 보관되나요?",
    platform="slack",
    workspace="T1",
    channel="C1",
    thread_root="1700000000.000100",
    user="U-asker",
)
FINAL = Final(
    "Postgres 백업은 14일 동안 보관됩니다 [1].",
    sources=[Source(1, "운영 가이드", "samples/kb/ops.md", "백업", "https://wiki/ops")],
    route="knowledge",
    language="ko",
)


@pytest.fixture
def store(tmp_path: Path) -> SqliteFeedbackStore:
    return SqliteFeedbackStore(tmp_path / "data" / "feedback.sqlite")


async def test_a_vote_is_kept_with_the_question_answer_and_sources(
    store: SqliteFeedbackStore,
) -> None:
    answer_id = await store.remember(AnswerRecord.of(TURN, FINAL))
    assert await store.rate(answer_id, "U-voter", "down")
    [entry] = store.entries("down")
    assert (entry.rating, entry.voter) == ("down", "U-voter")
    assert entry.answer.question == TURN.text
    assert entry.answer.answer == FINAL.answer
    assert entry.answer.thread_id == "slack:T1:C1:1700000000.000100"
    assert entry.source_list() == FINAL.sources


async def test_a_changed_mind_replaces_the_vote(store: SqliteFeedbackStore) -> None:
    answer_id = await store.remember(AnswerRecord.of(TURN, FINAL))
    await store.rate(answer_id, "U-voter", "down")
    await store.rate(answer_id, "U-voter", "up")
    assert store.entries("down") == []
    assert [e.rating for e in store.entries(None)] == ["up"]


async def test_a_vote_on_an_unknown_answer_is_refused(store: SqliteFeedbackStore) -> None:
    assert not await store.rate("never-stored", "U-voter", "up")
    assert store.entries(None) == []


async def test_unvoted_answers_expire_but_voted_ones_stay(tmp_path: Path) -> None:
    store = SqliteFeedbackStore(tmp_path / "f.sqlite", keep_s=60)
    old = AnswerRecord.of(TURN, FINAL)
    old_voted = AnswerRecord.of(TURN, FINAL)
    for record in (old, old_voted):
        object.__setattr__(record, "created_at", time.time() - 120)
        await store.remember(record)
    await store.rate(old_voted.answer_id, "U-voter", "down")
    await store.remember(AnswerRecord.of(TURN, FINAL))  # a new answer triggers the clean-up
    assert not await store.rate(old.answer_id, "U-voter", "down")
    assert [e.answer.answer_id for e in store.entries("down")] == [old_voted.answer_id]


async def test_teamrag_feedback_lists_the_negative_votes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAMRAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    store = SqliteFeedbackStore(tmp_path / "data" / "feedback.sqlite")
    liked = await store.remember(AnswerRecord.of(TURN, FINAL))
    disliked_final = Final("I do not know.", route="knowledge", language="en")
    disliked = await store.remember(
        AnswerRecord.of(Turn("How do I rotate keys?", platform="discord"), disliked_final)
    )
    await store.rate(liked, "U1", "up")
    await store.rate(disliked, "U2", "down")
    store.close()

    runner = CliRunner()
    shown = runner.invoke(app, ["feedback"])
    assert shown.exit_code == 0, shown.output
    assert "How do I rotate keys?" in shown.output
    assert "I do not know." in shown.output
    assert TURN.text not in shown.output

    as_json = runner.invoke(app, ["feedback", "--show", "all", "--json"])
    rows = [json.loads(line) for line in as_json.output.splitlines()]
    assert {r["rating"] for r in rows} == {"up", "down"}
    liked_row = next(r for r in rows if r["rating"] == "up")
    assert liked_row["sources"][0]["link"] == "https://wiki/ops"

    wrong = runner.invoke(app, ["feedback", "--show", "sideways"])
    assert wrong.exit_code == 2
    assert "--show must be down, up or all" in wrong.output
