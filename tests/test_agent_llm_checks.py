"""The agent with an LLM, driven over real HTTP: the judge's loop for missing evidence,
the groundedness check and its rewrites, and the failures (HTTP errors, rate limits,
timeouts, malformed JSON) that degrade an answer step by step.

The fast model's structured replies are scripted per step on the local fake server;
the knowledge base is the shipped samples.
"""

from __future__ import annotations

from pathlib import Path

from agent.events import Token, Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.support.agent_support import (
    BACKUPS,
    agent,
    analysis,
    collect,
    request_text,
    review,
    shown_text,
    stages,
    verdict,
)


async def test_the_sufficiency_loop_searches_for_missing_aspects_and_drops_the_early_draft(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply(
        "Review",
        review(0.3, ranking=[1, 2, 3, 4, 5, 6], missing=["#cs-escalation channel"]),
        review(0.85, ranking=[1, 2]),
    )
    fake_llm.reply("Analysis", analysis())
    fake_llm.reply("text", "DRAFT ONE [1]", "Tell support within 20 minutes in #cs-escalation [1].")
    fake_llm.reply("Verdict", verdict(True))
    fake_llm.latency_s = 0.05
    question = "How soon must customer support be told about an incident?"
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        events, final = await collect(runner, Turn(question))
        state = await runner.graph.aget_state({"configurable": {"thread_id": final.thread_id}})
    assert fake_llm.calls_by_task()["Review"] == 2
    assert "more" in stages(events)
    assert "DRAFT ONE" not in shown_text(events)  # the discarded draft was never shown
    assert shown_text(events) == final.answer and "20 minutes" in final.answer
    reviews = [request_text(c.body) for c in fake_llm.calls if c.task == "Review"]
    assert len(reviews[1]) > len(reviews[0])  # the loop added new passages
    searches = [request_text(c.body) for c in fake_llm.calls if c.task == "text"]
    assert "#cs-escalation" in searches[-1]
    assert state.values["iteration"] == 2


async def test_the_loop_stops_when_quality_stagnates_and_at_the_iteration_limit(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis())
    fake_llm.reply("text", "The documents only partly cover this [1].")
    fake_llm.reply("Verdict", verdict(True))
    # Stagnation: 0.30 then 0.32 (< 0.05 better) ends the loop after two reviews.
    fake_llm.reply("Review", review(0.3, missing=["a"]), review(0.32, missing=["b"]))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        await collect(runner, Turn("What is the meaning of life at Sora Labs?", thread_root="s"))
        assert fake_llm.calls_by_task()["Review"] == 2
        fake_llm.reset()
        fake_llm.reply("Analysis", analysis())
        fake_llm.reply("text", "The documents only partly cover this [1].")
        fake_llm.reply("Verdict", verdict(True))
        # Steady progress never reaches 0.7: the third review is the last (max 3 iterations).
        fake_llm.reply("Review", *(review(s, missing=[f"m{s}"]) for s in (0.2, 0.35, 0.5, 0.65)))
        _, final = await collect(runner, Turn("What else is there to know?", thread_root="i"))
    assert fake_llm.calls_by_task()["Review"] == 3
    assert final.answer.startswith("The documents only partly cover this")


async def test_groundedness_failure_rewrites_with_the_reason_then_passes(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis())
    fake_llm.reply("Review", review(0.9))
    fake_llm.reply("text", "Backups are kept for 90 days [1].", "Backups are kept for 35 days [1].")
    fake_llm.reply("Verdict", verdict(False, reason="the passages say 35 days, not 90"), verdict())
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        events, final = await collect(runner, Turn("How long are Postgres backups kept?"))
    assert final.answer == "Backups are kept for 35 days [1]."
    assert any(isinstance(e, Token) and e.reset for e in events)  # the chat clears draft one
    assert shown_text(events) == final.answer
    assert "rewrite_answer" in stages(events)
    rewrite_request = request_text([c.body for c in fake_llm.calls if c.task == "text"][1])
    assert "the passages say 35 days, not 90" in rewrite_request
    assert final.llm_calls == 6


async def test_exhausted_retries_end_in_an_honest_fallback_that_shows_the_sources(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis())
    fake_llm.reply("Review", review(0.9))
    fake_llm.reply("text", "Backups are kept forever [1].")
    # Each check a little better than the last, so only the retry bound stops the loop.
    scores = [0.3, 0.4, 0.5, 0.6] * 2
    fake_llm.reply(
        "Verdict",
        *(
            {**verdict(False, reason="not in the passages"), "grounded_score": s, "answer_score": s}
            for s in scores
        ),
    )
    question = "How long are Postgres backups kept?"
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn(question, thread_root="x"))
        _, again = await collect(runner, Turn(question, thread_root="y"))
    assert fake_llm.calls_by_task()["Verdict"] == 8  # 1 draft + 3 rewrites, twice
    assert final.answer.startswith("I couldn't write an answer I can fully support")
    assert "35 days" in final.answer and final.sources
    assert any("not in the passages" in note for note in final.notes)
    assert not again.cached  # a fallback is never cached


async def test_an_apology_only_answer_is_retried(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis())
    fake_llm.reply("Review", review(0.9))
    apology, answer = "죄송합니다. 알 수 없습니다.", "Postgres 백업은 35일 동안 보관됩니다 [1]."
    fake_llm.reply("text", apology, answer)
    fake_llm.reply("Verdict", verdict(True))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn(BACKUPS))
    assert final.answer == "Postgres 백업은 35일 동안 보관됩니다 [1]."
    assert fake_llm.calls_by_task()["text"] == 2


async def test_a_failing_llm_degrades_to_quoted_answers_with_sources(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    for task in ("Analysis", "Review", "text", "Verdict"):
        fake_llm.reply(task, Reply(status=500))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn(BACKUPS))
        _, again = await collect(runner, Turn(BACKUPS, thread_root="again"))
    assert final.degraded and final.route == "knowledge" and final.mode == "llm"
    assert "35 days" in final.answer and final.sources[0].locator == "p. 4"
    assert any("http_error" in note for note in final.notes)
    assert not again.cached  # a degraded answer is not kept


async def test_a_rate_limited_router_falls_back_to_the_prototypes(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", Reply(status=429))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, hello = await collect(runner, Turn("안녕"))
    assert hello.route == "smalltalk" and hello.degraded
    assert any("rate_limited" in note for note in hello.notes)
    assert "prefetch" not in hello.timings  # a greeting is not searched


async def test_a_timeout_and_malformed_json_fall_back_step_by_step(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", Reply(delay=4.0))
    fake_llm.reply("Review", Reply(malformed=True))
    fake_llm.reply("text", "Backups are kept for 35 days [1].")
    fake_llm.reply("Verdict", verdict(True))
    # The limit applies to every call: under a loaded CI machine the calls that answer at
    # once must still fit in it (at 0.5 s the draft once timed out too and was quoted).
    async with agent(sample_kb, tmp_path, llm=fake_llm, timeout_s=2.0) as runner:
        _, final = await collect(runner, Turn("How long are Postgres backups kept?"))
    assert final.degraded
    assert any("timeout" in note for note in final.notes)
    assert any("malformed" in note for note in final.notes)
    # The answer step itself still worked: it is the model's text, with its source.
    assert final.answer == "Backups are kept for 35 days [1]." and final.sources
