"""The LLM-free router: held-out accuracy with the real encoder, lone words, extra
prototypes, and prototypes embedded once.

The evaluation set is ``tests/support/intent_heldout.py``. Run with ``-s`` to see the
confusion matrix, misses and latency.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pytest

from agent.retrieval.embeddings import UniversalSentenceEncoder, Vectors
from agent.routing.intent import (
    PROTOTYPES,
    ROUTES,
    IntentGuess,
    PrototypeRouter,
    Route,
)
from agent.wording.language import detect_language
from tests.support.intent_heldout import CASES, EVALUATION


@dataclass(frozen=True)
class Evaluation:
    results: list[tuple[Route, str, str, IntentGuess]]
    milliseconds: list[float]

    @property
    def accuracy(self) -> float:
        return sum(gold == guess.route for gold, _, _, guess in self.results) / len(self.results)

    def accuracy_in(self, language: str) -> float:
        mine = [(gold, guess) for gold, lang, _, guess in self.results if lang == language]
        return sum(gold == guess.route for gold, guess in mine) / len(mine)

    def confusion(self) -> Counter[tuple[str, str]]:
        return Counter((gold, guess.route) for gold, _, _, guess in self.results)

    def report(self) -> str:
        confusion = self.confusion()
        short = {r: r[:9] for r in ROUTES}
        lines = [
            f"accuracy {self.accuracy:.3f} over {len(self.results)} "
            f"(en {self.accuracy_in('en'):.3f}, ko {self.accuracy_in('ko'):.3f})",
            "classify ms/call: mean {:.2f}, p50 {:.2f}, p95 {:.2f}, max {:.2f}".format(
                float(np.mean(self.milliseconds)),
                *np.percentile(self.milliseconds, [50, 95, 100]).tolist(),
            ),
            "gold \\ guess   " + " ".join(f"{short[r]:>9}" for r in ROUTES),
        ]
        for gold in ROUTES:
            row = " ".join(f"{confusion[gold, guess]:>9}" for guess in ROUTES)
            lines.append(f"{gold:<14} {row}")
        lines.append("misses:")
        for gold, _, text, guess in self.results:
            if gold != guess.route:
                lines.append(
                    f"  {text!r}: {gold} -> {guess.route} (confidence {guess.confidence:.2f})"
                )
        unsure = [guess for *_, guess in self.results if guess.confidence < 0.5]
        right = sum(gold == g.route for gold, *_, g in self.results if g.confidence < 0.5)
        lines.append(f"unsure (< 0.5): {len(unsure)}, of which right: {right}")
        return "\n".join(lines)


@pytest.fixture(scope="module")
def router(embedder: UniversalSentenceEncoder) -> PrototypeRouter:
    return PrototypeRouter(embedder)


@pytest.fixture(scope="module")
def evaluation(router: PrototypeRouter) -> Evaluation:
    router.classify("warm up")  # embeds the prototypes: not part of the per-call cost
    results: list[tuple[Route, str, str, IntentGuess]] = []
    milliseconds: list[float] = []
    for gold, language, text in CASES:
        start = time.perf_counter()
        guess = router.classify(text)
        milliseconds.append((time.perf_counter() - start) * 1000)
        results.append((gold, language, text, guess))
    evaluation = Evaluation(results, milliseconds)
    print("\n" + evaluation.report())
    return evaluation


def test_evaluation_set_is_held_out_and_large_enough() -> None:
    def normalise(text: str) -> str:
        return " ".join(text.lower().split()).rstrip("?!. ")

    prototypes = {normalise(t) for texts in PROTOTYPES.values() for t in texts}
    assert not [text for *_, text in CASES if normalise(text) in prototypes]
    for route in ROUTES:
        for language in ("en", "ko"):
            texts = EVALUATION[route][language]
            assert len(texts) >= 12, (route, language)
            assert all(detect_language(t) == language for t in texts if t.strip("?!* ()0123456789"))


def test_accuracy_on_held_out_messages(evaluation: Evaluation) -> None:
    assert evaluation.accuracy >= 0.9, evaluation.report()


def test_real_questions_are_almost_never_taken_for_smalltalk(evaluation: Evaluation) -> None:
    knowledge = [guess for gold, _, _, guess in evaluation.results if gold == "knowledge"]
    as_smalltalk = sum(guess.route == "smalltalk" for guess in knowledge)
    assert as_smalltalk / len(knowledge) <= 0.02, evaluation.report()


def test_guesses_are_well_formed(evaluation: Evaluation) -> None:
    for *_, guess in evaluation.results:
        assert 0.0 <= guess.confidence <= 1.0
        assert set(guess.scores) == set(ROUTES)


def test_confidence_separates_right_from_wrong_on_average(evaluation: Evaluation) -> None:
    right = [g.confidence for gold, *_, g in evaluation.results if gold == g.route]
    wrong = [g.confidence for gold, *_, g in evaluation.results if gold != g.route]
    if wrong:
        assert float(np.mean(right)) > float(np.mean(wrong)), evaluation.report()


def test_memory_commands_route_to_memory_with_full_confidence(router: PrototypeRouter) -> None:
    for text in ("forget my team", "내 정보 잊어줘", "what do you remember about me?"):
        guess = router.classify(text)
        assert (guess.route, guess.confidence) == ("memory", 1.0)


@pytest.mark.parametrize("text", ["Jenkins", "온콜", "VPN", "런북", "MFA", "출장", "Terraform"])
def test_a_lone_work_term_is_not_smalltalk(router: PrototypeRouter, text: str) -> None:
    # Lone words sit nearest the short greetings; searching for them is the cheap mistake.
    assert router.classify(text).route not in ("smalltalk", "memory")


@pytest.mark.parametrize("text", ["hey", "thx", "ㅎㅇ", "ㅋㅋ", "굿모닝", "땡큐", "bye"])
def test_a_lone_greeting_is_smalltalk(router: PrototypeRouter, text: str) -> None:
    assert router.classify(text).route == "smalltalk"


def test_extra_prototypes_extend_a_route(embedder: UniversalSentenceEncoder) -> None:
    text = "ping the bot"
    plain = PrototypeRouter(embedder).classify(text)
    extended = PrototypeRouter(embedder, {"tools": [text]}).classify(text)
    assert extended.route == "tools"
    assert extended.scores["tools"] > plain.scores["tools"]


def test_extra_prototypes_are_checked(embedder: UniversalSentenceEncoder) -> None:
    with pytest.raises(ValueError, match="unknown route 'weather'"):
        PrototypeRouter(embedder, {"weather": ["is it sunny"]})
    with pytest.raises(TypeError, match="list of strings"):
        PrototypeRouter(embedder, {"smalltalk": "yo"})


class CountingEmbedder:
    """The real encoder, counting batch calls and slowed so threads overlap."""

    def __init__(self, inner: UniversalSentenceEncoder) -> None:
        self._inner = inner
        self.batches = 0

    @property
    def name(self) -> str:
        return self._inner.name

    def embed_documents(self, texts: list[str]) -> Vectors:
        self.batches += 1
        time.sleep(0.05)
        return self._inner.embed_documents(texts)

    def embed_query(self, text: str) -> Vectors:
        return self._inner.embed_query(text)

    def embed_queries(self, texts: list[str]) -> Vectors:
        return self._inner.embed_queries(texts)

    def close(self) -> None:
        pass


def test_prototypes_are_embedded_once_lazily_across_threads(
    embedder: UniversalSentenceEncoder,
) -> None:
    counting = CountingEmbedder(embedder)
    router = PrototypeRouter(counting)
    assert counting.batches == 0
    guesses: list[IntentGuess] = []
    threads = [
        threading.Thread(target=lambda: guesses.append(router.classify("안녕하세요")))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert counting.batches == 1
    assert [g.route for g in guesses] == ["smalltalk"] * 8
