"""A passage that sends the reader to another document ("See the IT Equipment FAQ") has that
document searched too (agent/retrieval/pointers.py, KnowledgeBase.followed)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from agent.nodes.planning import RetrieveTask
from agent.nodes.retrieve import run_task
from agent.retrieval.following import followed, specific_words
from agent.retrieval.ingest import Ingestor
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.retrieval.pointers import (
    document_names,
    named_document,
    pointed_documents,
    pointer_names,
)

DOCUMENTS = document_names(
    [
        ("it", "/kb/it-equipment-faq.docx", "IT Equipment FAQ"),
        ("office", "/kb/office-guide.html", "판교 오피스 & 시설 가이드"),
        ("release", "/kb/build-and-release.md", "빌드 & 릴리스 프로세스"),
        ("onboarding", "/kb/onboarding.md", "New-Hire Onboarding Guide"),
        ("directory", "/kb/team-directory.md", "Team Directory & Who Owns What"),
    ]
)


def _none(terms: Sequence[str]) -> Mapping[str, Sequence[str]]:
    return {}


def _loanwords(terms: Sequence[str]) -> Mapping[str, Sequence[str]]:
    known = {"오피스": ("office",), "가이드": ("guide",), "디렉터리": ("directory",)}
    return {t: known[t] for t in terms if t in known}


@pytest.mark.parametrize(
    ("line", "document"),
    [
        ("- **Which laptop will I get?** See the IT Equipment FAQ.", "it"),
        ("Schedule and retention are in the build & release document.", "release"),
        ("Practical rules (badges, parking) are in the office guide.", "office"),
        ("For privacy questions, see the team directory rather than the data team.", "directory"),
        ("회의실 예약과 장비는 오피스 가이드를 참고하세요.", "office"),
        ("담당자 이름은 팀 디렉터리를 참고하세요.", "directory"),
    ],
)
def test_a_pointer_names_its_document_by_title_or_file_name(line: str, document: str) -> None:
    names = pointer_names(line)
    assert names, line
    found = [named_document(name, DOCUMENTS, _loanwords) for name in names[0]]
    assert next(d for d in found if d is not None) == document


@pytest.mark.parametrize(
    "line",
    [
        "See the approvals table above.",  # names no document
        "See the guide.",  # names several: none is the one
        "Laptops are replaced every 3 years.",  # points nowhere
        "휴가, 장비, 보안 관련 내용은 각 문서를 참고하세요.",
    ],
)
def test_a_line_that_names_no_single_document_points_nowhere(line: str) -> None:
    names = [name for names in pointer_names(line) for name in names]
    assert all(named_document(name, DOCUMENTS, _loanwords) is None for name in names)


def test_only_a_line_on_the_question_s_subject_is_followed() -> None:
    faq = (
        "- **Where do I park?** See the office & facilities guide.\n"
        "- **Which laptop will I get?** See the IT Equipment FAQ."
    )
    assert pointed_documents({"laptop"}, [faq], DOCUMENTS, _none) == ["it"]
    assert pointed_documents({"park"}, [faq], DOCUMENTS, _none) == ["office"]
    assert pointed_documents({"salary"}, [faq], DOCUMENTS, _none) == []


@pytest.fixture
def pointing_kb(kb: KnowledgeBase, tmp_path: Path) -> KnowledgeBase:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "onboarding.md").write_text(
        "# Onboarding\n\n## Questions people ask\n\n"
        "- **Which laptop will I get?** See the IT Equipment FAQ.\n"
        "- **When is payday?** Salary is paid on the 25th.\n",
        encoding="utf-8",
    )
    (docs / "it-equipment-faq.md").write_text(
        "# IT Equipment FAQ\n\n## Standard equipment by role\n\n"
        "| Role | Computer |\n|---|---|\n"
        "| Server / backend engineer | MacBook Pro 16-inch |\n"
        "| Artist | Windows workstation with a Wacom tablet |\n",
        encoding="utf-8",
    )
    for n in range(6):  # other pages, so the FAQ is not found by chance
        (docs / f"notes-{n}.md").write_text(
            f"# Notes {n}\n\nThe laptop bag rule {n}: keep it closed in meetings.\n",
            encoding="utf-8",
        )
    assert not Ingestor(kb).run([docs]).failed
    return kb


def test_the_search_follows_a_pointer_into_the_document_it_names(
    pointing_kb: KnowledgeBase,
) -> None:
    question = "which laptop do i get?"
    hits = pointing_kb.search(question, SearchOptions(k=3, neighbours=0))
    assert not any("MacBook" in h.chunk.text for h in hits)
    pointing = next(h for h in hits if "See the IT Equipment FAQ" in h.chunk.text)
    found = followed(pointing_kb, question, hits, SearchOptions(k=3, neighbours=0))
    assert found and all(Path(h.chunk.source).name == "it-equipment-faq.md" for h in found)
    assert any("MacBook Pro" in h.chunk.text for h in found)
    # Found by the pointer, ranked below it.
    assert all(h.score < pointing.score for h in found)


async def test_a_retrieve_step_says_which_documents_it_followed(
    pointing_kb: KnowledgeBase,
) -> None:
    task = RetrieveTask(
        label="which laptop do i get?", queries=["which laptop do i get?"], k=3, scopes=None,
        filters={}, exclude=[], neighbours=0,
    )  # fmt: skip
    found = await run_task(task, pointing_kb, "retrieve")
    assert found["path"][0]["followed"] == ["IT Equipment FAQ"]
    assert any("MacBook Pro" in item["text"] for item in found["pool"])
    # A question the pointing line is not about follows nothing.
    other = RetrieveTask(**(task | {"label": "payday", "queries": ["when is payday?"]}))
    assert "followed" not in (await run_task(other, pointing_kb, "retrieve"))["path"][0]


def test_a_pointer_to_a_document_the_channel_may_not_read_finds_nothing(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    public, private = tmp_path / "public", tmp_path / "private"
    public.mkdir()
    private.mkdir()
    (public / "onboarding.md").write_text(
        "# Onboarding\n\n- **Which laptop will I get?** See the IT Equipment FAQ.\n", "utf-8"
    )
    (private / "it-equipment-faq.md").write_text(
        "# IT Equipment FAQ\n\n| Role | Computer |\n|---|---|\n| Backend | MacBook Pro 16 |\n",
        "utf-8",
    )
    assert not Ingestor(kb).run([public]).failed
    assert not Ingestor(kb).run([private], scope="it").failed
    question = "which laptop do i get?"
    visible = frozenset({"public"})
    hits = kb.search(question, SearchOptions(k=3, neighbours=0, scopes=visible))
    assert hits and all(h.chunk.scope == "public" for h in hits)
    # The name resolves, but the search within it keeps to the scopes the turn may read.
    assert followed(kb, question, hits, SearchOptions(k=3, neighbours=0, scopes=visible)) == []
    everyone = followed(kb, question, hits, SearchOptions(k=3, neighbours=0))
    assert any("MacBook" in h.chunk.text for h in everyone)


def test_the_thing_a_question_asks_about_is_on_its_subject_however_common(
    pointing_kb: KnowledgeBase,
) -> None:
    # "laptop" is in every notes page, so "backend" is the question's rarer word; the
    # pointing line names the laptop, which is what "which laptop" asks about.
    question = "joining as a backend dev next month, which laptop do i receive?"
    hits = pointing_kb.search(question, SearchOptions(k=3, neighbours=0))
    assert specific_words(pointing_kb, question) == {"backend"}, "laptop is common"
    assert followed(pointing_kb, question, hits, SearchOptions(k=3, neighbours=0)) == []
    found = followed(
        pointing_kb, question, hits, SearchOptions(k=3, neighbours=0), focus=["laptop"]
    )
    assert any("MacBook Pro" in h.chunk.text for h in found)


async def test_a_retrieve_step_follows_a_pointer_to_what_the_question_asks_about(
    pointing_kb: KnowledgeBase,
) -> None:
    question = "joining as a backend dev next month, which laptop do i receive?"
    task = RetrieveTask(
        label=question, queries=[question], k=3, scopes=None, filters={}, exclude=[],
        neighbours=0,
    )  # fmt: skip
    found = await run_task(task, pointing_kb, "retrieve")
    assert found["path"][0]["followed"] == ["IT Equipment FAQ"]
