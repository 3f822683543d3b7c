"""The team glossary in the LLM's prompts: the planner and the answer are shown the pairs a
question or its passages name, in the team's spelling, over real HTTP to the fake model;
a question naming none sends the prompts as before; a catalog that cannot give its pairs
leaves them out without failing the turn."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.events import Turn
from agent.glossary.glossary import Glossary
from agent.glossary.prompt_pairs import MAX_CHARS, MAX_PAIRS, prompt_pairs
from agent.prompts import answer_messages
from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.ingest import Ingestor
from agent.retrieval.knowledge_base import KnowledgeBase, collection_name
from agent.retrieval.types import TermPair
from agent.retrieval.vectors import VectorStore
from tests.fakes.openai_server import FakeOpenAI
from tests.support.agent_support import agent, analysis, collect, request_text, script_answer

# The team's own spelling, in its file; no document holds a Korean side of a pair.
TEAM_FILE = '[terms]\n"인수인계" = "hand-off"\n"호출기" = "pager"\n'
DOCS = {
    "oncall.md": "# On-call rotation\n\nThe rotation has six engineers.\n\n"
    "## Weekly hand-off\n\nThe hand-off happens every Monday at 10:00 in the ops room.\n"
    "Pagers are tested on Fridays.\n",
    "lunch.md": "# 점심 안내\n\n점심시간은 12시부터 13시까지입니다. 식당은 2층에 있습니다.\n",
}
PLANNER_HEADING = "Team glossary (Korean = English)"
ANSWER_HEADING_KO = "팀 용어집 (한국어 = English)"


def _open(data_dir: Path, embedder: UniversalSentenceEncoder, team: Path | None) -> KnowledgeBase:
    vectors = VectorStore.embedded(data_dir / "chroma", collection_name(embedder.name))
    return KnowledgeBase(data_dir, embedder, vectors, glossary_file=team)


@pytest.fixture
def team_kb(tmp_path: Path, embedder: UniversalSentenceEncoder) -> Iterator[KnowledgeBase]:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in DOCS.items():
        (docs / name).write_text(text, "utf-8")
    team = tmp_path / "glossary.toml"
    team.write_text(TEAM_FILE, "utf-8")
    kb = _open(tmp_path / "data", embedder, team)
    assert not Ingestor(kb).run([docs]).failed
    yield kb
    kb.close()


def _request(fake: FakeOpenAI, task: str) -> dict[str, Any]:
    return next(call.body for call in fake.calls if call.task == task)


def _system(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


async def test_a_korean_question_shows_planner_and_answer_the_teams_spelling(
    team_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    """Korean question, English document: the planner's translation and the Korean answer
    are told the team writes 인수인계 "hand-off" (not "handover"), and the answer also
    gets 호출기 for the "Pagers" its English passage names."""
    script_answer(fake_llm, "인수인계는 매주 월요일 10시에 합니다 [1].")
    async with agent(team_kb, tmp_path / "agent", llm=fake_llm) as runner:
        _, final = await collect(runner, Turn("인수인계 무슨 요일에 해요?"))
    assert final.answer == "인수인계는 매주 월요일 10시에 합니다 [1]." and not final.degraded
    planner = _system(_request(fake_llm, "Analysis"))
    assert f"{PLANNER_HEADING}: when a variation" in planner
    assert planner.endswith("- 인수인계 = hand-off")  # the question's pair, the team's way
    assert "호출기" not in planner  # the passages' pairs are for the answer
    answer = request_text(_request(fake_llm, "text"))
    assert "Monday at 10:00" in answer  # the English passage reached the Korean answer
    assert ANSWER_HEADING_KO in answer
    assert "- 인수인계 = hand-off\n- 호출기 = pager" in answer


async def test_a_question_naming_no_term_sends_the_prompts_unchanged(
    team_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    """An English question about the Korean lunch page: nothing it or its passages name
    needs a pair (the English passage's "Pagers" is already the English answer's word)."""
    script_answer(fake_llm, "Lunch is from 12:00 to 13:00 [1].", analyses=[analysis()])
    async with agent(team_kb, tmp_path / "agent", llm=fake_llm) as runner:
        _, final = await collect(runner, Turn("When is lunch time?"))
    assert final.answer == "Lunch is from 12:00 to 13:00 [1]."
    planner = _system(_request(fake_llm, "Analysis"))
    assert planner.endswith("What you remember about this user: (nothing yet)")
    body = _request(fake_llm, "text")
    assert "점심시간" in request_text(body) and "Pagers" in request_text(body)
    # The system message is exactly the one a prompt without a glossary has.
    plain = answer_messages("x", [], language="en", style="normal", history=[], summary="",
                            profile="", feedback="")  # fmt: skip
    assert _system(body) == plain[0].content
    assert "glossary" not in request_text(body).lower()


async def test_a_catalog_that_cannot_give_its_pairs_leaves_them_out_and_the_turn_answers(
    tmp_path: Path,
    embedder: UniversalSentenceEncoder,
    fake_llm: FakeOpenAI,
    caplog: pytest.LogCaptureFixture,
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "oncall.md").write_text(
        "# On-call\n\nThe handover (인수인계) happens every Monday at 10:00.\n", "utf-8"
    )
    kb = _open(tmp_path / "data", embedder, None)
    try:
        assert not Ingestor(kb).run([docs]).failed
        assert kb.catalog.term_pairs()  # the document's "handover (인수인계)"
        # The pairs' table goes away under the running catalog (another host's older
        # schema, a failed migration): every other table still answers.
        with sqlite3.connect(tmp_path / "data" / "catalog.sqlite3") as db:
            db.execute("DROP TABLE term_pairs")
        script_answer(fake_llm, "인수인계는 월요일 10시입니다 [1].")
        with caplog.at_level(logging.WARNING, logger="agent.glossary.cache"):
            async with agent(kb, tmp_path / "agent", llm=fake_llm) as runner:
                _, final = await collect(runner, Turn("인수인계 무슨 요일에 해요?"))
    finally:
        kb.close()
    assert final.answer == "인수인계는 월요일 10시입니다 [1]." and final.sources
    assert PLANNER_HEADING not in _system(_request(fake_llm, "Analysis"))
    assert ANSWER_HEADING_KO not in request_text(_request(fake_llm, "text"))
    warnings = [r.getMessage() for r in caplog.records]
    assert any("glossary pairs unavailable from the catalog" in m and "term_pairs" in m
               for m in warnings), warnings  # fmt: skip


def _glossary(*pairs: tuple[str, str]) -> Glossary:
    return Glossary([("doc.md", TermPair(ko, en, "paren", 0.9)) for ko, en in pairs])


def test_questions_name_pairs_in_either_language_passages_through_the_other_side() -> None:
    glossary = _glossary(
        ("인수인계", "handover"), ("에러 버짓", "error budget"), ("배포", "deploy")
    )
    # Question pairs first, in the question's order, whichever side it names.
    found = prompt_pairs(glossary, "Is the error budget checked at 인수인계?")
    assert [p.ko for p in found] == ["에러 버짓", "인수인계"]
    # A two-word term needs both words.
    assert prompt_pairs(glossary, "what is our budget?") == []
    # A Korean answer from an English passage needs the Korean side of "deploy"; an
    # English answer copies "deploy" as written and needs no pair.
    passage = ["We deploy on Tuesdays."]
    assert [p.ko for p in prompt_pairs(glossary, "언제요?", passage, language="ko")] == ["배포"]
    assert prompt_pairs(glossary, "when?", passage, language="en") == []
    # No language: the question's pairs only (the planner has no passages yet).
    assert prompt_pairs(glossary, "언제요?", passage) == []


def test_prompt_pairs_are_capped_in_number_and_length() -> None:
    many = _glossary(*((f"용어{i}", f"term{i}") for i in range(40)))
    question = " ".join(f"term{i}" for i in range(40))
    found = prompt_pairs(many, question)
    assert len(found) == MAX_PAIRS and found[0].en == "term0"
    long = _glossary(("긴용어", "x" * MAX_CHARS), ("짧은", "short"))
    assert [p.en for p in prompt_pairs(long, "긴용어 짧은")] == ["short"]
