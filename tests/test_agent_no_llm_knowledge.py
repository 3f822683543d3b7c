"""The agent with no LLM (extractive mode, the embedded default): questions for the
documents. Answers are quoted sentences with ``[n]`` citations; a question the documents
do not answer says so; chit-chat is not searched; a Chroma server going away leaves
keyword search.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.events import Progress, Turn
from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.ingest import Ingestor
from agent.retrieval.knowledge_base import KnowledgeBase, collection_name
from agent.retrieval.tokenizer import PREDICATE_ENDINGS, words
from agent.retrieval.vectors import VectorStore
from agent.runner import Runner
from agent.wording import replies
from tests.support.agent_support import BACKUPS, agent, collect, stages
from tests.support.extractive_support import CITATION, HANDOVER, ask, assert_cited, searched
from tests.support.servers import chroma_server


async def test_korean_question_is_answered_with_quotes_and_citations(runner: Runner) -> None:
    events, final = await ask(runner, BACKUPS)
    assert final.route == "knowledge" and final.language == "ko"
    assert not (final.degraded or final.blocked or final.cached)
    assert_cited(final)
    assert "35 days" in final.answer
    first = final.sources[0]
    assert first.source.endswith("ops-handbook.pdf") and first.locator == "p. 4"
    assert first.title.startswith("Operations handbook")
    assert stages(events)[0] == "analyze" and searched(events)
    assert all(isinstance(e, Progress) and e.text for e in events[:-1])


async def test_english_question_is_answered_from_the_wiki(runner: Runner) -> None:
    _, final = await ask(runner, HANDOVER)
    assert final.route == "knowledge" and final.language == "en"
    assert not (final.degraded or final.blocked or final.cached)
    assert_cited(final)
    assert "Monday at 10:00 KST" in final.answer and "#oncall-handover" in final.answer
    wiki = [s for s in final.sources if s.source.endswith("onboarding.html")]
    assert wiki and wiki[0].locator.startswith("On-call rotation")


@pytest.mark.parametrize(
    ("question", "file", "locator", "fact"),  # fact: any of these quoted words
    [
        (
            "How soon must customer support be told about an incident that affects customers?",
            "ops-handbook.pdf",
            "p. 3",
            ("20분",),
        ),
        (
            "`teamrag ingest`의 `--prune` 옵션은 무엇을 하나요?",
            "user-guide",
            "",
            (
                "파일이 사라진 문서를 인덱스에서도 지웁니다",
                "removes the documents whose files",
                "Deleted files stay in the index until you run `teamrag ingest` on their folder",
            ),
        ),
        (
            "Which team owns the billing service, and which Slack channel do I ask in?",
            "faq.docx",
            "Service owners",
            ("billing | Payments | #team-payments",),
        ),
    ],
)
async def test_sample_readme_questions_quote_the_passage_that_answers(
    runner: Runner, question: str, file: str, locator: str, fact: tuple[str, ...]
) -> None:
    """The rest of the table in samples/README.md: the answering passage is quoted."""
    _, final = await ask(runner, question, thread=file)
    assert final.route == "knowledge"
    assert_cited(final)
    assert any(file in s.source and s.locator.startswith(locator) for s in final.sources), [
        (s.source, s.locator) for s in final.sources
    ]
    assert any(words in final.answer for words in fact), final.answer


@pytest.mark.parametrize(
    "question",
    [
        "운영 배포는 언제 할 수 있어?",
        "롤백은 몇 분 안에 할 수 있어야 돼?",
        "온콜 인수인계 몇 시에?",
        "장애 나면 고객이 보는 상태 페이지 주소가 뭐죠?",
        "휴가 신청은 며칠 전까지 넣어야 돼요?",
    ],
)
async def test_a_chat_question_is_never_searched_again_for_how_it_was_asked(
    runner: Runner, question: str
) -> None:
    """Without an LLM the judge searches again for the question's words the passages lack.
    "할 수 있어?", "해야 돼?" and the character pairs of a compound are not such words: a
    search for "있어" brought passages with 있어도 into the answer in place of the one
    that answers. Nor are verbs inflected as chat types them ("나면", "보는", "넣어야"),
    or 며칠."""
    _, final = await ask(runner, question, thread=question)
    searched = [step["query"] for step in final.path if step["node"] == "retrieve"]
    looked_for = [query.removeprefix("missing: ") for query in searched[1:]]
    allowed = {w for w in words(question) if w[-1] not in PREDICATE_ENDINGS}
    assert set(looked_for) <= allowed, looked_for


async def test_scope_with_no_documents_finds_nothing_and_says_so(runner: Runner) -> None:
    _, final = await ask(runner, BACKUPS, scopes=frozenset({"nonexistent"}))
    assert final.route == "knowledge" and final.sources == []
    assert "35" not in final.answer and not CITATION.search(final.answer)
    assert "찾지 못했" in final.answer
    assert not final.cached


# Questions the sample documents do not answer. Before, the first three were greeted ("Hi!
# I'm teamrag": the prototypes read them as "what's your name?"), and "who founded the
# company?" quoted a line about search settings under "Here is what the documents say"
# (the passages shared "the"-level words with it; the line itself shares none).
UNANSWERED = [
    "What is the name of the CEO's dog?",
    "명성황후의 이름은?",
    "who is Kim Minji?",
    "who founded the company?",
    "How do I book a meeting room?",
    "출장비 정산은 어떻게 하나요?",
    "연봉 인상률은 얼마인가요?",
    "What is the dress code?",  # "code" is in the documents (error codes); "dress" is not
]


@pytest.mark.parametrize("question", UNANSWERED)
async def test_a_question_the_documents_do_not_answer_says_so(
    runner: Runner, question: str
) -> None:
    _, final = await ask(runner, question, thread=question)
    assert final.route == "knowledge", (final.route, final.answer)
    assert not final.covered
    assert final.answer.startswith(replies.text("not_covered", final.language)), final.answer


@pytest.mark.parametrize(
    "question",
    [BACKUPS, HANDOVER, "감사 로그는 얼마나 보관해요?", "How do I get prod access?"],
)
async def test_an_answered_question_is_not_called_unanswered(runner: Runner, question: str) -> None:
    """The other side of the line: an answer whose sentence shares no word with the
    question (a Korean question, an English page) still opens as found."""
    _, final = await ask(runner, question, thread=question)
    assert final.covered and not final.answer.startswith(
        replies.text("not_covered", final.language)
    ), final.answer


@pytest.mark.parametrize(
    "text",
    ["재밌는 얘기 해줘", "밥 먹었어?", "I'm bored", "뭐 해?", "사람이야 AI야?"],
)
async def test_chit_chat_without_a_subject_is_still_small_talk(runner: Runner, text: str) -> None:
    _, final = await ask(runner, text, thread=text)
    assert final.route == "smalltalk", (final.route, final.answer)


async def test_a_chroma_server_going_away_degrades_to_keyword_search(
    tmp_path: Path, embedder: UniversalSentenceEncoder
) -> None:
    doc = tmp_path / "docs" / "lunch.md"
    doc.parent.mkdir()
    doc.write_text("# Lunch\n\nLunch is served at noon in the third-floor cafeteria.", "utf-8")
    with chroma_server(tmp_path / "chroma-server") as url:
        vectors = VectorStore.remote(url, collection_name(embedder.name))
        kb = KnowledgeBase(tmp_path / "data", embedder, vectors)
        Ingestor(kb).run([doc.parent])
    # The server is gone: the answer still comes, from keyword search, and says so.
    try:
        async with agent(kb, tmp_path / "memory") as runner:
            _, final = await collect(runner, Turn("When is lunch served?"))
            # Small talk the keywords do not claim cannot be weighed by meaning now: it is
            # answered as small talk, not turned into an error.
            _, chat = await collect(runner, Turn("사람이야 AI야?", thread_root="chat"))
    finally:
        kb.close()
    assert "noon" in final.answer and final.sources[0].source.endswith("lunch.md")
    assert any("vector search unavailable" in note for note in final.notes)
    assert chat.route == "smalltalk" and not chat.degraded and chat.answer, chat
