"""No text entry point takes super-linear time: one pasted blob must not freeze a worker.

A regular expression that backtracks on a long run (``(?:[\\w.]+\\s*){0,3}?`` over a
4,000-character hash took minutes) blocks the event loop: every other user, /healthz
and SIGTERM wait with it. These property-style tests feed every function that runs
patterns on user or document text adversarial 4,000-character inputs, and every
compiled pattern in ``agent`` and ``adapters`` the same inputs plus its own prefix
repeated, and require each to finish well under a second (a blowup takes many).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import pkgutil
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from adapters.chat.split import split_text
from adapters.slack.markup import plain_question
from agent.answers.definitions import defined_names
from agent.answers.extractive import extractive_answer
from agent.answers.sentences import blocks, split_sentences
from agent.cache.answer import normalize_question
from agent.guards.input import check_input
from agent.guards.normalize import normalise, spelled_runs, variants, visible
from agent.guards.output import check_output
from agent.memory.budget import count_tokens
from agent.memory.extraction import extract_facts_locally
from agent.memory.profile import kind_named
from agent.nodes.compression import compress
from agent.retrieval.chunking import chunk_document, is_row
from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.loaders import LoadError, load_document, markdown_sections
from agent.retrieval.pointers import has_pointer, pointer_names
from agent.retrieval.tokenizer import tokenize, words
from agent.retrieval.types import Chunk, SearchHit
from agent.routing.bypass import (
    asks_about_something,
    is_creative_request,
    is_pleasantry,
    match_needed,
)
from agent.routing.followup import resolve
from agent.routing.intent import (
    PrototypeRouter,
    is_acknowledgement,
    is_context_dependent,
    memory_command,
)
from agent.sources.code_comments import comments_text
from agent.sources.git import line_range
from agent.sources.web import page_links
from agent.tools.calculator import calculate
from agent.tools.clock import asks_for_datetime
from agent.tools.errors import ToolError
from agent.tools.expressions import find_expression
from agent.websearch.provider import search_terms, trim
from agent.wording.language import detect_language
from agent.wording.replies import smalltalk

N = 4000
BOUND_S = 1.0  # per call; a quadratic pattern at 4,000 chars takes well under, a cubic minutes
# Routing and quoting also embed the text (about 1 s of CPU for 4,000 characters here).
EMBEDDING_BOUND_S = 5.0


def _run(n: int) -> dict[str, str]:
    """The adversarial shapes: long runs of one class, and runs that alternate classes."""

    def rep(unit: str) -> str:
        return (unit * (n // len(unit) + 1))[:n]

    token = rep("aZ09/+#.-_")
    return {
        "letters": rep("a"),
        "digits": rep("1"),
        "hash-token": token,
        "a/": rep("a/"),
        "dots": rep("."),
        "punct": rep("!?"),
        "commas": rep(","),
        "dashes": rep("-"),
        "pipes": rep("|"),
        "stars": rep("*"),
        "hashes": rep("#"),
        "digit-dot": rep("1."),
        "hangul": rep("가"),
        "hangul-latin": rep("가a"),
        "hangul-space": rep("팀 "),
        "spaces": "a" + " " * (n - 2) + "b",
        "newlines": "a" + "\n" * (n - 2) + "b",
        "mixed-space": rep(" \t\n"),
        "word-space": rep("ab "),
        "brackets": rep("(["),
        "angle": rep("<@"),
        # The same runs behind the openings the memory, routing and guard patterns look for.
        "ko-self": "저는 " + token,
        "ko-role": token[: n - 10] + " 개발자로 일해요",
        "ko-team": token[: n - 10] + " 팀이에요",
        "en-role": "i'm a " + token,
        "en-team": "i work on the " + rep("ab ")[: n - 20] + " team",
        "ignore": rep("ignore previous "),
        "remember": rep("기억 "),
        "percent": rep("1% "),
    }


INPUTS = _run(N)


def _within_bound(
    call: Callable[[str], object], text: str, what: str, bound_s: float = BOUND_S
) -> None:
    started = time.process_time()
    call(text)
    spent = time.process_time() - started
    assert spent < bound_s, (
        f"{what} took {spent:.2f} s of CPU on a {N}-character input: a regular expression "
        "backtracks super-linearly. Rewrite it so each position is tried a bounded number "
        "of times (no nested or adjacent quantifiers over the same characters)."
    )


@pytest.fixture(scope="module")
def router(embedder: UniversalSentenceEncoder) -> PrototypeRouter:
    return PrototypeRouter(embedder)


def _hit(text: str) -> SearchHit:
    return SearchHit(Chunk("doc:1", "doc", 0, text, "/docs/doc.md", "Doc"), 1.0)


def _entry_points() -> dict[str, Callable[[str], object]]:
    """Every function that runs patterns on a user's message or a document's text."""
    return {
        "memory extraction": extract_facts_locally,
        "memory command": memory_command,
        "memory kind": kind_named,
        "acknowledgement": is_acknowledgement,
        "context dependent": functools.partial(is_context_dependent, has_history=True),
        "follow-up": lambda t: (resolve(t, [t]), resolve(t[:150], [t, t]), resolve("p2는요?", [t])),
        "creative": is_creative_request,
        "asks about": asks_about_something,
        "pleasantry": is_pleasantry,
        "bypass": match_needed,
        "input guard": functools.partial(check_input, max_chars=2 * N),
        "output guard": check_output,
        "guard normalise": lambda t: (visible(t), normalise(t), spelled_runs(t), variants(t)),
        "calculator find": find_expression,
        "calculator": _calculate,
        "clock": asks_for_datetime,
        "sentences": lambda t: (blocks(t), split_sentences(t), is_row(t)),
        "tokenizer": lambda t: (words(t), tokenize(t)),
        "language": detect_language,
        "web search terms": lambda t: (search_terms(t), trim(t)),
        "answer cache key": normalize_question,
        "compression": lambda t: compress(t, t),
        "token count": count_tokens,
        "smalltalk": lambda t: (smalltalk(t, "en"), smalltalk(t, "ko")),
        "markdown loader": _load_all,
        "code comments": lambda t: comments_text("x.py", t.encode()),
        "web links": lambda t: page_links(f"<a href='{t}'>{t}</a>", "http://127.0.0.1/"),
        "git line range": lambda t: line_range(t.splitlines() or [t], t),
        "chat split": lambda t: split_text(t, 2000),
        "slack question": lambda t: plain_question(f"<@U1> {t}", "U1"),
        "pointers": lambda t: (has_pointer(t), pointer_names(t), pointer_names(f"see the {t}")),
        "definitions": lambda t: defined_names(t, [t, f"- **{t[:60]}**: {t}"]),
    }


def _calculate(text: str) -> None:
    with contextlib.suppress(ToolError):  # "too long" is a fine answer, if given at once
        calculate(text)


def _load_all(text: str) -> None:
    markdown_sections(text)
    data = text.encode()
    for name in ("a.md", "a.txt", "a.html"):
        with contextlib.suppress(LoadError):  # "no main text" is a fine answer too
            document = load_document(Path(name), data)
            chunk_document(document, doc_id="d", source=name, content_hash="h")


@pytest.mark.parametrize("entry", sorted(_entry_points()))
def test_every_text_entry_point_is_linear_on_adversarial_input(entry: str) -> None:
    function = _entry_points()[entry]
    for shape, text in INPUTS.items():
        _within_bound(function, text, f"{entry} on {shape!r}")


def test_routing_and_extractive_quoting_are_linear_on_adversarial_input(
    router: PrototypeRouter, embedder: UniversalSentenceEncoder
) -> None:
    for shape in ("hash-token", "a/", "spaces", "hangul-latin", "ko-role", "punct"):
        text = INPUTS[shape]
        _within_bound(router.classify, text, f"routing on {shape!r}", EMBEDDING_BOUND_S)
        _within_bound(
            lambda t: extractive_answer(t, [_hit(t)], embedder),
            text,
            f"extractive answer on {shape!r}",
            EMBEDDING_BOUND_S,
        )


def _patterns() -> Iterator[tuple[str, re.Pattern[str]]]:
    """Every compiled pattern a module of ``agent`` or ``adapters`` holds, also inside
    lists, dicts and dataclasses (the guards' rules), so a new one is tested unasked."""
    seen: set[int] = set()

    def collect(value: Any, where: str, depth: int) -> Iterator[tuple[str, re.Pattern[str]]]:
        if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
            if id(value) not in seen:
                seen.add(id(value))
                yield where, value
        elif depth < 3 and isinstance(value, list | tuple | set | frozenset):
            for item in value:
                yield from collect(item, where, depth + 1)
        elif depth < 3 and isinstance(value, dict):
            for item in (*value.keys(), *value.values()):
                yield from collect(item, where, depth + 1)
        elif depth < 3 and dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                yield from collect(getattr(value, f.name), where, depth + 1)

    for package in ("agent", "adapters"):
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                yield from collect(value, f"{info.name}.{name}", 0)


def _own_prefix(pattern: re.Pattern[str]) -> str:
    """The first literal characters the pattern looks for ("ignore", "저는"), to repeat."""
    literal = re.sub(r"\\[a-zA-Z]|\(\?[^)]*?\)|[\\^$()\[\]{}?*+|.]", "", pattern.pattern)
    return literal[:8] or "a"


ALL_PATTERNS = sorted(_patterns(), key=lambda item: item[0])


def test_the_pattern_collector_sees_the_guards_and_the_memory_patterns() -> None:
    names = {where for where, _ in ALL_PATTERNS}
    assert "agent.memory.extraction._KO_ROLE_WORKS" in names
    assert any(name.startswith("agent.guards.injection") for name in names)
    assert len(ALL_PATTERNS) > 100


@pytest.mark.parametrize(("where", "pattern"), ALL_PATTERNS, ids=[w for w, _ in ALL_PATTERNS])
def test_every_pattern_is_linear_on_adversarial_input(where: str, pattern: re.Pattern[str]) -> None:
    prefix = _own_prefix(pattern)
    own = {"own prefix": (prefix * N)[:N], "own prefix, spaced": ((prefix + " ") * N)[:N]}

    def both(text: str) -> object:
        return pattern.match(text), pattern.sub("", text)

    for shape, text in {**INPUTS, **own}.items():
        # match() tries the anchored start (where nested repeats blow up), sub() every
        # position (where a run rescanned from each start is quadratic).
        _within_bound(both, text, f"{where} on {shape!r}")
