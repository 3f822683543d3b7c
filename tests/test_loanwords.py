"""Loanwords and romanized names bridge the two scripts without a glossary entry
(agent/glossary/loanwords.py): 빅쿼리 is "bigquery", 판교 is "pangyo", and a native word
whose consonants happen to match an English one (사용 and "using") is not.

The vocabularies and documents are written here, not taken from a benchmark, and the
encoder is the real one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.answers.extractive import extractive_answer
from agent.glossary.glossary import Glossary
from agent.glossary.loanwords import (
    Loanwords,
    english_key,
    korean_key,
    looks_borrowed,
    romanized,
)
from agent.glossary.sound import KeyIndex, transcribable
from agent.nodes.planning import RetrieveTask
from agent.nodes.retrieve import run_task
from agent.retrieval.embeddings import (
    OpenAICompatibleEmbedder,
    UniversalSentenceEncoder,
    encoder_similarity,
)
from agent.retrieval.ingest import Ingestor
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.retrieval.types import Chunk, SearchHit
from tests.support.servers import free_port

VOCABULARY = [
    # English words of a team's documents (as the keyword index keeps them)
    "bigquery", "slack", "channel", "rollback", "checklist", "server", "review", "bug",
    "book", "using", "pangyo", "figure", "take", "deploy", "hotfix", "song",
    # Korean words of its Korean documents
    "롤백", "채널", "스튜디오", "사용", "위탁", "배포", "판교", "그리고",
]  # fmt: skip


@pytest.fixture(scope="module")
def loanwords(embedder: UniversalSentenceEncoder) -> Loanwords:
    return Loanwords(VOCABULARY, encoder_similarity(embedder))


def test_both_scripts_reduce_to_the_same_consonants() -> None:
    for korean, english in [("슬랙", "slack"), ("빅쿼리", "bigquery"), ("서버", "server"),
                            ("체크리스트", "checklist"), ("핫픽스", "hotfix")]:  # fmt: skip
        assert korean_key(korean) == english_key(english), (korean, english)
    assert korean_key("slack") is None and english_key("슬랙") is None
    assert romanized("판교") == "pangyo"


# Foreign names of an English document, ordinary English words of the same consonants,
# and Korean words (native ones among them) of a Korean document.
NAMES = [
    "mozart", "salzburg", "hamburg", "fitzgerald", "inflation", "nation", "model", "lot",
    "later", "market", "hamlet", "motor", "mister", "born", "written", "figure", "salt",
    "모델", "마켓", "깨달", "받은", "함께", "도시", "작곡", "가장",
]  # fmt: skip


@pytest.fixture(scope="module")
def names(embedder: UniversalSentenceEncoder) -> Loanwords:
    return Loanwords(NAMES, encoder_similarity(embedder))


def test_keys_follow_how_korean_transliterates() -> None:
    """The r Korean writes before a consonant (부르크 "burg"), "tion" as 션, "tz" as 츠."""
    for korean, english in [("함부르크", "hamburg"), ("인플레이션", "inflation"),
                            ("모차르트", "mozart"), ("에너지", "energy")]:  # fmt: skip
        assert korean_key(korean) == english_key(english), (korean, english)
    assert english_key("light") == "LT"  # a silent gh


def test_keys_a_letter_apart_are_found_through_the_index() -> None:
    index = KeyIndex()
    for key in ("PJLT", "PJT", "LT", "MKT"):
        index.add(key)
    assert index.near("PJJLT") == [(1, "PJLT")]  # 피츠제럴드 against "fitzgerald"
    assert index.near("LK") == []  # a key of two letters must match exactly
    assert (0, "LT") in index.near("LT")


def test_native_spelling_is_not_a_loanword_spelling() -> None:
    """Loanwords are written without tense consonants and with seven finals only."""
    assert transcribable("잘츠부르크") and transcribable("마켓")
    assert not transcribable("깨달") and not transcribable("받은") and not transcribable("함께")
    assert not looks_borrowed("깨달")


def test_a_foreign_name_finds_its_english_spelling(names: Loanwords) -> None:
    assert names.counterparts("모차르트") == ("mozart",)
    assert names.counterparts("함부르크") == ("hamburg",)
    assert names.counterparts("잘츠부르크") == ("salzburg",)
    assert names.counterparts("피츠제럴드") == ("fitzgerald",)  # a letter off: 츠제 "tzg"
    assert names.counterparts("인플레이션") == ("inflation",)
    for native in ("깨달", "함께", "작곡", "도시", "가장"):
        assert names.counterparts(native) == (), native


def test_only_a_korean_word_gets_its_loanword_in_the_keyword_query(names: Loanwords) -> None:
    """The keyword query adds a Korean word's loanword (an English page names Mozart in
    Latin letters only), not an English word's: that drew Korean pages ahead of the
    English one that answers an English question."""
    glossary = Glossary(loanwords=names)
    assert glossary.counterparts(["모차르트", "market"]) == {}
    assert glossary.counterparts(["모차르트", "market"], sounded=True) == {"모차르트": ("mozart",)}


def test_a_word_with_syllables_no_sino_korean_word_has_looks_borrowed() -> None:
    assert looks_borrowed("슬랙") and looks_borrowed("체크리스트")
    assert not looks_borrowed("사용")  # every syllable a Sino-Korean reading
    assert not looks_borrowed("받아")  # a verb form


def test_a_loanword_finds_its_english_word(loanwords: Loanwords) -> None:
    assert loanwords.counterparts("빅쿼리") == ("bigquery",)  # spelled alike, not meant
    assert loanwords.counterparts("버그") == ("bug",)  # meant, where "book" spells closer
    assert loanwords.counterparts("슬랙") == ("slack",)
    assert loanwords.counterparts("판교") == ("pangyo",)  # romanization


def test_an_english_word_finds_its_loanword(loanwords: Loanwords) -> None:
    assert loanwords.counterparts("rollback") == ("롤백",)
    assert loanwords.counterparts("pangyo") == ("판교",)


def test_native_words_of_matching_consonants_are_not_loanwords(loanwords: Loanwords) -> None:
    assert loanwords.counterparts("사용") == ()  # S-NG like "using", and means it
    assert loanwords.counterparts("위탁") == ()  # T-K like "take"
    assert loanwords.counterparts("받아") == ()  # a verb form
    assert loanwords.counterparts("deploy") == ()  # 배포 is a translation, not a loanword
    assert loanwords.counterparts("휴가") == ()  # nothing of its sound in the vocabulary


def test_a_korean_question_is_answered_from_an_english_document_through_a_loanword(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    """No glossary pairs 지라 with Jira: the sound does, through the whole path (keyword
    search, sentence choice, the "found" judgement)."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "triage.md").write_text(
        "# Bug triage\n\nAll bugs go into the Jira project **MRB**.\n\n"
        "Feature work lives in the MRA project.\n\n"
        "# Laptops\n\nLaptops are replaced every three years.\n",
        encoding="utf-8",
    )
    assert not Ingestor(kb).run([docs]).failed
    question = "버그는 지라 어느 프로젝트에 올려요?"
    hits = kb.search(question)
    answer = extractive_answer(
        question, hits, kb.embedder, unrelated_intro="NOT FOUND", glossary=kb.glossary()
    )
    assert answer.related, answer.text
    assert "MRB" in answer.text.splitlines()[2], answer.text


def test_the_sentence_beside_that_holds_the_address_leads(
    embedder: UniversalSentenceEncoder,
) -> None:
    """The question's words are in "... live there."; the address it asks for is in the
    sentence before it, which then leads."""
    text = (
        "Before your first day you'll get an invite to a portal at "
        "https://onboard.example.com. Your personal checklist, contract paperwork and "
        "welcome videos live there. Lunch is served at noon in the canteen."
    )
    chunk = Chunk("o:1", "onboarding", 0, text, "/docs/onboarding.md", "Onboarding")
    answer = extractive_answer(
        "what's the link for my personal checklist and contract paperwork?",
        [SearchHit(chunk, 1.0)],
        embedder,
        unrelated_intro="NOT FOUND",
    )
    assert answer.related, answer.text
    assert "https://onboard.example.com" in answer.text.splitlines()[2], answer.text


def test_a_failing_encoder_leaves_the_word_without_a_counterpart_and_asks_again(
    embedder: UniversalSentenceEncoder, caplog: pytest.LogCaptureFixture
) -> None:
    """An embeddings endpoint that is down (nothing listens on the port) does not fail the
    answer: the word goes without a loanword, the log says why, and the next question
    asks again rather than remembering the failure."""
    down = OpenAICompatibleEmbedder(
        "e5", base_url=f"http://127.0.0.1:{free_port()}/v1", api_key=None, timeout=2.0
    )
    loanwords = Loanwords(VOCABULARY, encoder_similarity(down))
    assert loanwords.counterparts("버그") == ()
    assert "loanword lookup" in caplog.text and "127.0.0.1" in caplog.text
    caplog.clear()
    assert loanwords.counterparts("버그") == ()
    assert "loanword lookup" in caplog.text  # asked again, not remembered as "none"
    # A spelling match needs no encoder, and romanization none either.
    assert loanwords.counterparts("판교") == ("pangyo",)


def test_a_question_is_respelled_word_by_word_in_the_other_script(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    """What the sufficiency loop searches when a word is missing: the words the glossary
    or a loanword rule knows, written the other way; None when it knows none."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "owners.md").write_text(
        "# Owners\n\n| Area | Owner |\n|---|---|\n| Build pipeline | Park Ji-hoon |\n"
        "| Release checklist | Lee Seung-woo |\n",
        encoding="utf-8",
    )
    assert not Ingestor(kb).run([docs]).failed
    glossary = kb.glossary()
    assert glossary.respelled("파이프라인") == "pipeline"
    assert glossary.respelled("빌드 파이프라인 담당자") == "build pipeline 담당자"
    assert glossary.respelled("휴가 며칠") is None


async def test_a_missing_word_is_searched_again_in_the_other_script(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    """A Korean question's 파이프라인 matches no keyword of an English page: the search for
    it as missing (``respell``) also searches "pipeline", says so in its step, and finds
    the row; the same task without ``respell`` searches the word as written only."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "owners.md").write_text(
        "# Owners\n\n| Area | Owner |\n|---|---|\n| Build pipeline | Park Ji-hoon |\n",
        encoding="utf-8",
    )
    (docs / "lunch.md").write_text("# Lunch\n\nLunch is served at noon.\n", encoding="utf-8")
    assert not Ingestor(kb).run([docs]).failed
    task = RetrieveTask(
        label="missing: 파이프라인", queries=["파이프라인"], k=2, scopes=None, filters={},
        exclude=[], neighbours=0, respell=True,
    )  # fmt: skip
    found = await run_task(task, kb, "retrieve")
    assert found["path"][0]["respelled"] == ["pipeline"]
    assert "Park Ji-hoon" in found["pool"][0]["text"]
    plain = await run_task(RetrieveTask(**(task | {"respell": False})), kb, "retrieve")
    assert "respelled" not in plain["path"][0]


def test_a_loanword_is_found_among_many_words_of_its_sound(
    embedder: UniversalSentenceEncoder,
) -> None:
    """A short key has many words ("bug", "book", "pick", "park" ... are all P-K): the
    encoder is asked about every one spelled as alike as the best few, not a cut through
    a tie in alphabetical order."""
    vocabulary = ["book", "poke", "bug", "pick", "park", "pack", "pig", "puck", "pug", "fig", "faq"]
    assert Loanwords(vocabulary, encoder_similarity(embedder)).counterparts("버그") == ("bug",)


def test_a_word_spelled_as_no_loanword_is_written_finds_none(
    embedder: UniversalSentenceEncoder,
) -> None:
    """Loanword orthography writes no tense consonant: 따라 ("following") is no "dalla",
    however alike the letters; nor is a word with the particle 의 a loanword."""
    loanwords = Loanwords(["dalla", "barry", "kenaani", "follow"], encoder_similarity(embedder))
    assert loanwords.counterparts("따라") == ()
    assert loanwords.counterparts("빨리") == ()
    assert loanwords.counterparts("칸의") == ()
