"""Asking the agent with no LLM (extractive mode, the embedded default) in tests: the
``runner`` fixture on the shipped samples, one turn that checks it stayed extractive,
the check that every ``[n]`` cites a real source, and a thread's saved state.

Everything the tests/test_agent_no_llm_*.py modules run is real: the shipped samples in
the knowledge base, SQLite thread and user memory and the answer cache in a temporary
folder, the runner's event stream.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from agent.events import Event, Final, Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.runner import Runner
from tests.support.agent_support import agent, collect, stages

HANDOVER = "When and where is the on-call handover?"
SEARCH_STAGES = {"search", "search_one", "found", "judge", "more", "write", "web"}
CITATION = re.compile(r"\[(\d+)\]")


@pytest.fixture
async def runner(sample_kb: KnowledgeBase, tmp_path: Path) -> AsyncIterator[Runner]:
    async with agent(sample_kb, tmp_path) as built:
        yield built


async def ask(
    runner: Runner,
    text: str,
    thread: str = "t1",
    *,
    user: str = "minji",
    scopes: frozenset[str] | None = None,
) -> tuple[list[Event], Final]:
    """One turn; every Final, whatever its route, says how long the turn took."""
    events, final = await collect(runner, Turn(text, thread_root=thread, user=user, scopes=scopes))
    assert final.timings.get("total", 0) > 0, final.timings
    assert final.mode == "extractive" and final.llm_calls == 0, final
    assert final.usage.total_tokens == 0
    return events, final


def assert_cited(final: Final) -> None:
    """Quoted passages whose every ``[n]`` names one of the Final's real sources."""
    assert final.sources, final.answer
    assert "> " in final.answer  # quoted, not paraphrased
    numbers = {int(n) for n in CITATION.findall(final.answer)}
    assert numbers == set(range(1, len(final.sources) + 1)), (final.answer, final.sources)
    for number, source in enumerate(final.sources, start=1):
        assert source.number == number and source.kind == "document"
        assert source.title and source.doc_id
        assert Path(source.source).is_file(), source.source


async def thread_values(runner: Runner, thread: str) -> dict[str, object]:
    config = {"configurable": {"thread_id": Turn("", thread_root=thread).thread_id}}
    state = await runner.graph.aget_state(config)  # type: ignore[arg-type]
    return dict(state.values)


def searched(events: Sequence[Event]) -> bool:
    return bool(SEARCH_STAGES & set(stages(events)))
