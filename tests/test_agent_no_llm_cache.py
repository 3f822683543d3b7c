"""The agent with no LLM (extractive mode, the embedded default) and its answer cache:
a repeated question is served from it, "not in the documents" is never kept, and
re-ingesting a cited document invalidates what cited it.
"""

from __future__ import annotations

from pathlib import Path

from agent.config import AgentConfig, Features
from agent.retrieval.ingest import Ingestor
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.runner import Runner
from tests.support.agent_support import BACKUPS, agent, stages
from tests.support.extractive_support import ask


async def test_repeated_question_in_a_fresh_thread_is_served_from_the_cache(
    runner: Runner,
) -> None:
    _, first = await ask(runner, BACKUPS, thread="a")
    events, second = await ask(runner, BACKUPS, thread="b")
    assert not first.cached and first.route == "knowledge"
    assert second.cached and second.route == "cached"
    assert second.answer == first.answer
    assert [(s.source, s.locator, s.number) for s in second.sources] == [
        (s.source, s.locator, s.number) for s in first.sources
    ]
    assert stages(events) == ["cache"]


async def test_cache_switched_off_is_never_used(sample_kb: KnowledgeBase, tmp_path: Path) -> None:
    config = AgentConfig(features=Features(cache=False))
    async with agent(sample_kb, tmp_path, config=config) as runner:
        finals = [(await ask(runner, BACKUPS, thread=f"t{i}"))[1] for i in range(2)]
    assert [(f.cached, f.route) for f in finals] == [(False, "knowledge")] * 2


async def test_an_answer_saying_the_documents_do_not_cover_it_is_not_cached(
    kb: KnowledgeBase, ingestor: Ingestor, tmp_path: Path
) -> None:
    """A new document invalidates no cached entry (none cites it), so "not in the
    documents" must not be kept: asked again after the ingest, it is searched again."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "handbook.md").write_text("# Handbook\n\nPostgres backups are kept for 35 days.\n")
    assert not ingestor.run([docs]).failed
    question = "When does Project Kestrel roll out?"
    async with agent(kb, tmp_path / "agent") as runner:
        _, first = await ask(runner, question, thread="a")
        _, again = await ask(runner, question, thread="b")
        (docs / "kestrel.md").write_text("# Kestrel\n\nProject Kestrel rolls out on May 5.\n")
        assert not ingestor.run([docs]).failed
        _, fresh = await ask(runner, question, thread="c")
    assert not first.covered and not first.cached, first
    assert not again.cached and not again.covered
    assert fresh.covered and not fresh.cached and "May 5" in fresh.answer, fresh.answer


async def test_reingesting_a_cited_document_invalidates_its_cached_answers(
    kb: KnowledgeBase, ingestor: Ingestor, tmp_path: Path
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "lunch.md"
    page.write_text("# Team lunch\n\nThe team lunch is every Friday at noon in the garden.\n")
    assert not ingestor.run([docs]).failed
    question = "When is the team lunch?"
    async with agent(kb, tmp_path / "agent") as runner:
        _, first = await ask(runner, question, thread="a")
        _, again = await ask(runner, question, thread="b")
        page.write_text("# Team lunch\n\nThe team lunch moved to Thursday at 13:00, upstairs.\n")
        assert not ingestor.run([docs]).failed
        _, fresh = await ask(runner, question, thread="c")
    assert "Friday" in first.answer and again.cached
    assert not fresh.cached and fresh.route == "knowledge"
    assert "Thursday" in fresh.answer and "Friday" not in fresh.answer
    assert fresh.sources[0].source == str(page)
