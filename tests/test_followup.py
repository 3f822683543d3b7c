"""Follow-ups read against the thread without an LLM (agent/routing/followup.py).

The resolver runs on the real multilingual encoder (its word cosines pick a focus's
counterpart); the last test asks a two-turn thread through the real runner, on the
shipped samples, and reads the answer, its citation and the progress line.
"""

from __future__ import annotations

import pytest

from agent.answers.kind import asked_kind
from agent.events import Progress, Turn
from agent.retrieval.embeddings import Similarity, UniversalSentenceEncoder, encoder_similarity
from agent.routing.followup import resolve
from agent.runner import Runner
from agent.wording.progress import message
from tests.support.agent_support import collect


@pytest.fixture(scope="module")
def similarity(embedder: UniversalSentenceEncoder) -> Similarity:
    return encoder_similarity(embedder)


@pytest.mark.parametrize(
    ("previous", "follow_up", "resolved"),
    [
        # A label of the same series takes its place.
        ("how long is the v1 api supported?", "and v2?", "how long is the v2 api supported?"),
        ("P2 버그는 며칠 안에 고쳐야 해?", "P3는?", "P3 버그는 며칠 안에 고쳐야 해?"),
        ("who signs off a tier-1 change?", "what about tier-2?", "who signs off a tier-2 change?"),
        # The word nearest in meaning does.
        ("정규직 노트북 교체 주기가 어떻게 돼요?", "계약직은요?",
         "계약직 노트북 교체 주기가 어떻게 돼요?"),
        ("what's the wifi name?", "and the password?", "what's the wifi password?"),
        (
            "how many vacation days do new employees get?",
            "what about contractors?",
            "how many vacation days do new contractors get?",
        ),
        # A name for a name, and the word that came with it beside it.
        (
            "How long are Postgres backups kept?",
            "and the Redis snapshots?",
            "How long are Redis snapshots kept?",
        ),
        # The same word stays where it was; the new one goes beside it.
        ("출장 가면 숙박비 얼마까지 돼?", "해외 출장은요?", "해외 출장 가면 숙박비 얼마까지 돼?"),
        # A condition replaces the condition.
        ("야근하면 택시비 지원돼요?", "주말에 출근하면요?", "주말에 출근하면 택시비 지원돼요?"),
        (
            "do I get a taxi allowance if I work late?",
            "what if I work on a holiday?",
            "do I get a taxi allowance if I work on a holiday?",
        ),
    ],
)  # fmt: skip
def test_a_new_focus_takes_the_place_of_its_counterpart(
    similarity: Similarity, previous: str, follow_up: str, resolved: str
) -> None:
    resolution = resolve(follow_up, [previous], similarity)
    assert resolution is not None and resolution.question == resolved
    assert resolution.previous == previous
    # The previous question's question word stays, and with it the kind of answer asked for.
    assert asked_kind(resolution.question) == asked_kind(previous)


@pytest.mark.parametrize(
    ("previous", "follow_up", "subject", "kind"),
    [
        ("보안 교육은 언제까지 들어야 돼요?", "안 들으면 어떻게 돼요?", "보안 교육", None),
        ("who owns the billing service?", "and if he's on leave who covers?", "billing service",
         "person"),
        # The previous question asked for an amount (한도); the follow-up asks when.
        ("야근 식대 한도 얼마야?", "그건 언제 정산해?", "야근 식대", "when"),
        ("how do I get a parking permit?", "and how much does it cost?", "parking permit",
         "amount"),
        ("릴리스 전에 뭐 해야 돼?", "그 체크리스트", "릴리스", None),
        # The words that asked for a share go whole, not cut inside a word ("센트로").
        ("카나리는 트래픽 몇 퍼센트로 시작해?", "그 다음엔 어떻게 해?", "카나리는 트래픽 시작해",
         None),
    ],
)  # fmt: skip
def test_a_question_of_its_own_carries_the_previous_subject_and_asks_its_own_kind(
    similarity: Similarity, previous: str, follow_up: str, subject: str, kind: str | None
) -> None:
    resolution = resolve(follow_up, [previous], similarity)
    assert resolution is not None and resolution.reading == "carry"
    assert subject in resolution.question
    assert asked_kind(resolution.question) == kind


def test_a_follow_up_of_a_follow_up_is_read_against_the_resolved_one(
    similarity: Similarity,
) -> None:
    earlier = ["whats the fix deadline for a p1 bug?", "and p2?", "thanks!"]
    resolution = resolve("and p3?", earlier, similarity)
    assert resolution is not None
    assert resolution.previous == "whats the fix deadline for a p2 bug?"
    assert resolution.question == "whats the fix deadline for a p3 bug?"


def test_without_a_counterpart_or_an_encoder_the_focus_is_added() -> None:
    resolution = resolve("계약직은요?", ["정규직 노트북 교체 주기가 어떻게 돼요?"])
    assert resolution is not None and resolution.reading == "appended"
    assert "계약직" in resolution.question and "교체 주기" in resolution.question
    english = resolve("what about contractors?", ["how many vacation days do employees get?"])
    assert english is not None
    assert english.question == "how many vacation days do employees get contractors?"
    # A name needs no encoder: it stands for the one name the previous question has.
    named = resolve("what about Austin?", ["where is the Pangyo office?"])
    assert named is not None and named.question == "where is the Austin office?"


def test_nothing_to_resolve_against_and_long_messages() -> None:
    assert resolve("and v2?", []) is None
    assert resolve("and v2?", ["thanks!", "ㅋㅋ"]) is None
    long = "and " + "x " * 200
    resolution = resolve(long, ["how long is the v1 api supported?"])
    assert resolution is not None and resolution.reading == "appended"
    assert resolution.question.startswith("how long is the v1 api supported?")


# --- through the runner ------------------------------------------------------------------


# The runner fixture is the shared one (tests/support/extractive_support.py, via conftest).


@pytest.mark.parametrize(
    ("language", "first", "follow_up", "read_as", "answer"),
    [
        ("ko", "SEV1이면 진행 상황 얼마마다 공유해?", "SEV2이면요?",
         "SEV2이면 진행 상황 얼마마다 공유해?", "SEV2이면 60분마다"),
        ("en", "How long are Postgres backups kept?", "and the Redis snapshots?",
         "How long are Redis snapshots kept?", "kept for 7 days"),
    ],
)  # fmt: skip
async def test_a_follow_up_in_a_thread_is_answered_and_the_step_says_how_it_was_read(
    runner: Runner, language: str, first: str, follow_up: str, read_as: str, answer: str
) -> None:
    thread = f"follow-{language}"
    _, earlier = await collect(runner, Turn(first, thread_root=thread))
    assert earlier.sources
    events, final = await collect(runner, Turn(follow_up, thread_root=thread))
    lines = [e.text for e in events if isinstance(e, Progress) and e.stage == "rewrite"]
    assert lines == [message("rewrite", language, question=read_as)]
    first_quote = next(line for line in final.answer.splitlines() if line.startswith("> "))
    assert answer in first_quote, final.answer
    assert final.covered is not False
    assert final.sources[0].source.endswith("ops-handbook.pdf"), final.sources
    assert any(read_as in note for note in final.notes), final.notes
