"""What a team glossary costs a question: 10,000 term pairs, looked up for real questions.

    python benchmarks/glossary_cost.py [--pairs 10000] [--questions 2000]

Builds a :class:`agent.glossary.glossary.Glossary` from synthetic pairs (a Korean term of
two to four syllables and an English term of one or two words, as mined glossaries look)
and times ``counterparts`` over questions made from the same words, printing p50 and p95
in milliseconds and the build time. The goal (issue 32): p95 under 2 ms per question.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from agent.glossary.glossary import Glossary
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
    timings.sort()
    p50 = statistics.median(timings)
    p95 = timings[int(0.95 * len(timings)) - 1]
    print(f"{args.pairs} pairs: built in {build_ms:.0f} ms; counterparts per question "
          f"p50 {p50:.3f} ms, p95 {p95:.3f} ms over {args.questions} questions")  # fmt: skip


if __name__ == "__main__":
    main()
