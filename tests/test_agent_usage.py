"""Token usage per model: the fast and the chat model are priced apart, so the Final
splits ``usage`` by the model names the endpoint was asked for."""

from __future__ import annotations

import json
from pathlib import Path

from agent.events import Turn, Usage
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.state import merge_by_key_or_reset
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.support.agent_support import agent, analysis, collect, review, verdict


async def test_usage_is_split_by_model_and_adds_up_to_the_total(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    # The judge (fast) and the speculative draft (chat) run side by side: both write usage.
    fake_llm.reply("Analysis", Reply(content=analysis(), usage=(100, 10)))
    fake_llm.reply("Review", Reply(content=review(0.9), usage=(200, 20)))
    fake_llm.reply("text", Reply(content="Backups are kept for 35 days [1].", usage=(300, 30)))
    fake_llm.reply("Verdict", Reply(content=verdict(True), usage=(400, 40)))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn("How long are Postgres backups kept?"))
        _, cached = await collect(
            runner, Turn("How long are Postgres backups kept?", thread_root="2")
        )
    assert {call.model for call in fake_llm.calls} == {"fast-model", "chat-model"}
    assert final.usage_by_model == {
        "fast-model": Usage(700, 70),
        "chat-model": Usage(300, 30),
    }
    assert final.usage == Usage(1000, 100)
    data = json.loads(json.dumps(final.to_dict()))
    assert data["usage_by_model"]["fast-model"] == {
        "prompt_tokens": 700,
        "completion_tokens": 70,
        "total_tokens": 770,
    }
    assert sum(u["total_tokens"] for u in data["usage_by_model"].values()) == 1100
    # The next turn starts from zero: a cache hit costs nothing.
    assert cached.cached and cached.usage_by_model == {} and cached.usage == Usage()


async def test_each_turn_counts_only_its_own_calls(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", Reply(content=analysis("smalltalk", reply="Hi!"), usage=(5, 1)))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, first = await collect(runner, Turn("hello"))
        _, second = await collect(runner, Turn("hello again"))  # the same thread
    assert first.usage_by_model == second.usage_by_model == {"fast-model": Usage(5, 1)}


async def test_extractive_turns_report_no_models(kb: KnowledgeBase, tmp_path: Path) -> None:
    async with agent(kb, tmp_path) as runner:
        _, final = await collect(runner, Turn("hello"))
    assert final.usage_by_model == {} and final.to_dict()["usage_by_model"] == {}


def test_the_reducer_sums_per_model_and_starts_over_on_reset() -> None:
    fast = {"prompt_tokens": 1, "completion_tokens": 2}
    merged = merge_by_key_or_reset({"fast": fast}, {"fast": fast, "chat": fast})
    assert merged == {
        "fast": {"prompt_tokens": 2, "completion_tokens": 4},
        "chat": fast,
    }
    assert merge_by_key_or_reset(merged, None) == {}
