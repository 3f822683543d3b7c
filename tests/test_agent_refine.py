"""Seed 003's self-refine loop: a failed check searches for what was missing, then rewrites;
a loop that stops improving ends early with the honest fallback."""

from __future__ import annotations

from pathlib import Path

from agent.events import Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI
from tests.support.agent_support import (
    agent,
    analysis,
    collect,
    request_text,
    review,
    stages,
)


def failing(missing: list[str], score: float = 0.3) -> dict[str, object]:
    return {
        "grounded": False,
        "grounded_score": score,
        "answers_question": True,
        "answer_score": 0.9,
        "reason": "the answer needs where the handover happens",
        "missing": missing,
    }


PASSING = {
    "grounded": True,
    "grounded_score": 0.95,
    "answers_question": True,
    "answer_score": 0.95,
    "reason": "",
    "missing": [],
}


def drafts(fake: FakeOpenAI) -> list[str]:
    return [request_text(c.body) for c in fake.calls if c.task == "text"]


async def test_a_failed_check_searches_for_what_was_missing_before_the_rewrite(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis())
    fake_llm.reply("Review", review(0.9))
    fake_llm.reply("text", "Backups: 35 days [1].", "Backups: 35 days [1]; handover in [2].")
    fake_llm.reply("Verdict", failing(["on-call handover channel"]), PASSING)
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        events, final = await collect(runner, Turn("How long are Postgres backups kept?"))
    first, rewrite = drafts(fake_llm)
    # The rewrite was written from evidence the first draft did not have: the handover.
    assert "oncall-handover" not in first
    assert "oncall-handover" in rewrite
    assert "more" in stages(events)  # "looking for: on-call handover channel"
    assert final.answer.startswith("Backups: 35 days [1]")
    assert len(final.sources) == 2
    assert fake_llm.calls_by_task()["Verdict"] == 2


async def test_a_loop_that_stops_improving_ends_early_with_the_fallback(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis())
    fake_llm.reply("Review", review(0.9))
    fake_llm.reply("text", "Backups are kept forever [1].")
    # The same score and the same missing fact, already searched: nothing new to write from.
    fake_llm.reply("Verdict", failing(["backup retention in years"]))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn("How long are Postgres backups kept?"))
    # Two checks, not the four of three full rewrites.
    assert fake_llm.calls_by_task()["Verdict"] == 2
    assert final.answer.startswith("I couldn't write an answer I can fully support")
    assert final.sources
