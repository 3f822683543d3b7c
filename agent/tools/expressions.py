"""Finding the calculation a chat message asks for, without an LLM.

When no LLM is there to call the calculator, the agent has to spot "1,200 곱하기 3은
얼마야" itself, and must not mistake dates, versions or "3-4 days off" for sums:
those are questions for the documents. The message is normalised as the calculator
would, and the longest arithmetic span is taken only when everything around it is
filler.
"""

from __future__ import annotations

import ast
import re

from agent.tools.calculator import (
    _CONSTANTS,
    _FUNCTIONS,
    _NUM,
    MAX_EXPRESSION_CHARS,
    _normalize,
    _parse,
)
from agent.tools.errors import ToolError

__all__ = ["find_expression"]

_NAME_ALTERNATIVES = "|".join(sorted(_FUNCTIONS.keys() | _CONSTANTS.keys(), key=len, reverse=True))
_TOKEN = (
    rf"(?:(?<![a-z_.\d]){_NUM}"  # not glued to a word: v2.3 and mp3 are not numbers
    rf"|\b(?:{_NAME_ALTERNATIVES})\b"
    r"|\*\*|//|[-+*/%(),])"
)
_SPAN = re.compile(rf"{_TOKEN}(?:[ \t]*{_TOKEN})*")
_DATE_LIKE = re.compile(
    r"\d{4}\s*[-/.]\s*\d{1,2}\s*[-/.]\s*\d{1,2}|\d{1,2}\s*/\s*\d{1,2}\s*/\s*\d{2,4}"
    r"|(?<![\d.])0\d"  # zero-padded parts: dates, phone numbers, ids
)
_POSTFIX_PERCENT = re.compile(r"%(?!\s*[\w(.])")

# What may surround a calculation in a chat message. Anything else ("2024-01-15 회의록",
# "3-4 days off") means the numbers belong to a question the documents should answer.
_EN_FILLER = frozenset(
    """
    a about also and answer approximately are be calc calculate can compute could do does eval
    evaluate exactly figure for get give hello hey hi how i in is it just know make many math me
    much need now of ok okay please pls plz question quick quickly result results roughly s so
    solve tell thank thanks the then to total u us value want what whats will work would you
    """.split()
)
_KO_FILLER = re.compile(
    "(?:"
    + "|".join(
        sorted(
            """
            얼마 계산 알려 정답 결과 무엇 입니 인가 일까 줄래 세요 빨리 한번 혹시 부탁 나와 나오
            은 는 이 가 을 를 도 요 야 몇 뭐 뭔 해 줘 주 래 좀 답 값 예 에 인 지 죠 니 냐 나 와 오
            봐 바 다 까 게 돼 되 될 어 번 하 면 임 구 라 고 거 것
            """.split(),
            key=len,
            reverse=True,
        )
    )
    + ")+"
)
# Every run of letters, in any script: a Chinese or German question quoting "(973-1048)" is
# not filler around a sum just because its words are neither English nor Korean.
_WORD = re.compile(r"[^\W\d_]+")
_MENTION = re.compile(r"<[@#!][^<>\s]*>")


def _is_filler(text: str) -> bool:
    if re.search(r"\d", text):
        return False
    for word in _WORD.findall(text):
        if word in _EN_FILLER:
            continue
        if not _KO_FILLER.fullmatch(word):
            return False
    return True


def _trim(candidate: str) -> str:
    """Drop operators dangling at either end of a span ("2-factor" leaves "2-")."""
    candidate = candidate.strip()
    while candidate and candidate[-1] in "+-*/,(":
        candidate = candidate[:-1].rstrip()
    while candidate and candidate[0] in "+*/%,)":
        candidate = candidate[1:].lstrip()
    return candidate


def _is_arithmetic(candidate: str) -> bool:
    """True when the span parses and does some arithmetic (not a lone number or "15%")."""
    try:
        _parse(candidate)
        bare = ast.parse(_POSTFIX_PERCENT.sub("", candidate).strip(), mode="eval").body
    except (ToolError, SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    if isinstance(bare, ast.UnaryOp):
        bare = bare.operand
    return not isinstance(bare, ast.Constant | ast.Name)


def find_expression(text: str) -> str | None:
    """The arithmetic a chat message asks for, in a form :func:`calculate` accepts, or None.

    ``"1,200 곱하기 3은 얼마야"`` -> ``"1200 * 3"``; ``"15% of 240"`` -> ``"15% * 240"``;
    ``"2024년 휴가 정책"``, ``"v2.3 release notes"`` -> None.
    """
    if not text or len(text) > MAX_EXPRESSION_CHARS:
        return None
    # A chat mention ("<@U024BE7LH> 3+4?") carries digits that would read as leftover numbers.
    text = _MENTION.sub(" ", text).replace("’", "'")
    normalized = _normalize(text)
    best: tuple[str, int, int] | None = None
    for match in _SPAN.finditer(normalized):
        raw = match.group()
        candidate = _trim(raw)
        if not candidate or (best is not None and len(candidate) <= len(best[0])):
            continue
        if _DATE_LIKE.search(candidate) or not _is_arithmetic(candidate):
            continue
        start = match.start() + raw.index(candidate)
        best = (candidate, start, start + len(candidate))
    if best is None:
        return None
    candidate, start, end = best
    if not _is_filler(normalized[:start] + " " + normalized[end:]):
        return None
    return " ".join(candidate.split())
