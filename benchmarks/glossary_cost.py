"""What a team glossary costs a question: 10,000 term pairs, looked up for real questions.

    python benchmarks/glossary_cost.py [--pairs 10000] [--questions 2000]

Builds a :class:`agent.glossary.glossary.Glossary` from synthetic pairs (a Korean term of
two to four syllables and an English term of one or two words, as mined glossaries look)
and times ``counterparts`` over questions made from the same words, printing p50 and p95
in milliseconds and the build time. The goal (issue 32): p95 under 2 ms per question.

With an LLM a turn also picks the pairs its prompts show (``prompt_pairs``): for the
planner from the question, for the answer from the question and eight passages of about
1,200 characters; that is timed too, with the index it builds on first use.

A word no pair lists goes to the loanword rule (agent/glossary/loanwords.py), which
compares it with the knowledge base's words of the same sound, asking the encoder the
first time it sees the word: that is timed over a vocabulary of ``--vocabulary`` terms,
for words seen for the first time and again.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from agent.glossary.glossary import Glossary
from agent.glossary.loanwords import Loanwords
from agent.glossary.prompt_pairs import prompt_pairs
from agent.retrieval.tokenizer import words
from agent.retrieval.types import TermPair

_SYLLABLES = [chr(c) for c in range(ord("가"), ord("힣"), 97)]
_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _korean(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))


def _english(rng: random.Random) -> str:
    return " ".join(
        "".join(rng.choice(_LETTERS) for _ in range(rng.randint(4, 9)))
        for _ in range(rng.randint(1, 2))
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--questions", type=int, default=2_000)
    parser.add_argument("--vocabulary", type=int, default=50_000)
    args = parser.parse_args()
    rng = random.Random(7)
    pairs = [TermPair(_korean(rng), _english(rng), "paren", 0.9) for _ in range(args.pairs)]
    started = time.perf_counter()
    glossary = Glossary([("doc", p) for p in pairs])
    build_ms = (time.perf_counter() - started) * 1000
    timings = []
    for _ in range(args.questions):
        picked = rng.sample(pairs, 2)
        question = f"{picked[0].ko} 언제 {picked[1].en} 하나요 {_korean(rng)}?"
        terms = words(question)
        start = time.perf_counter()
        glossary.counterparts(terms)
        timings.append((time.perf_counter() - start) * 1000)
    p50, p95 = _percentiles(timings)
    print(f"{args.pairs} pairs: built in {build_ms:.0f} ms; counterparts per question "
          f"p50 {p50:.3f} ms, p95 {p95:.3f} ms over {args.questions} questions")  # fmt: skip
    _prompt_cost(glossary, pairs, rng, args.questions // 10)
    _loanword_cost(rng, args.vocabulary, args.questions // 10)


def _percentiles(timings: list[float]) -> tuple[float, float]:
    timings.sort()
    return statistics.median(timings), timings[int(0.95 * len(timings)) - 1]


def _prompt_cost(
    glossary: Glossary, pairs: list[TermPair], rng: random.Random, questions: int
) -> None:
    """The pairs an answer prompt shows: a question and eight passages, a few of whose
    words are glossary terms among filler words."""
    started = time.perf_counter()
    glossary.named_in(["x"])  # the first call builds its index
    index_ms = (time.perf_counter() - started) * 1000
    timings = []
    for _ in range(questions):
        picked = rng.sample(pairs, 10)
        question = f"{picked[0].ko} 언제 {picked[1].en} 하나요?"
        passages = []
        for _ in range(8):
            filler = [_english(rng) for _ in range(110)]
            for pair in rng.sample(picked, 3):
                filler.insert(rng.randrange(len(filler)), pair.en)
            passages.append(" ".join(filler))
        start = time.perf_counter()
        prompt_pairs(glossary, question, passages, language="ko")
        timings.append((time.perf_counter() - start) * 1000)
    p50, p95 = _percentiles(timings)
    print(f"prompt pairs (question and 8 passages, {sum(map(len, passages)) // 8} characters "
          f"each): index built in {index_ms:.0f} ms; p50 {p50:.3f} ms, p95 {p95:.3f} ms over "
          f"{questions} answers")  # fmt: skip


def _loanword_cost(rng: random.Random, size: int, questions: int) -> None:
    from agent.retrieval.embeddings import UniversalSentenceEncoder, encoder_similarity

    vocabulary = [_korean(rng) if n % 2 else _english(rng).split()[0] for n in range(size)]
    embedder = UniversalSentenceEncoder()
    embedder.embed_query("warm")  # the model loads once per process, not per question
    builds = []
    for _ in range(2):  # the second as after a document changes: its words' keys are known
        started = time.perf_counter()
        loanwords = Loanwords(vocabulary, encoder_similarity(embedder))
        builds.append((time.perf_counter() - started) * 1000)
    print(f"loanwords: {size} vocabulary terms indexed in {builds[0]:.0f} ms, "
          f"again in {builds[1]:.0f} ms")  # fmt: skip
    asked = [[_korean(rng), _korean(rng), _english(rng).split()[0]] for _ in range(questions)]
    for label in ("first sight", "seen before"):
        timings = []
        for terms in asked:
            start = time.perf_counter()
            for term in terms:
                loanwords.counterparts(term)
            timings.append((time.perf_counter() - start) * 1000)
        p50, p95 = _percentiles(timings)
        print(f"loanwords, three unlisted words a question, {label}: "
              f"p50 {p50:.3f} ms, p95 {p95:.3f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
