"""Term pairs a document writes down, found by their shape (no translation model).

Teams write the bridge between their languages themselves: a term with its translation in
parentheses ("SLO (서비스 수준 목표)", "인수인계(handover)"), a bilingual title
("Operations handbook / 운영 핸드북"), a two-column glossary table, a definition list, a
document kept in both languages with its headings in the same order. Each shape has a
confidence: a parenthesis right after a term is nearly always its translation or its
expansion; headings paired by position only when both halves have as many.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from agent.retrieval.types import LoadedDocument, TermPair

MINER_VERSION = "2"
"""Part of every document's pipeline id: a miner that finds other pairs mines every
document again, or an upgrade kept the pairs an older release found (a language's name
taken for a translation) until each file changed."""

# A translation is a term, not a sentence: longer sides are prose, not a pair.
_MAX_WORDS = 5
_MAX_CHARS = 40
_HANGUL = re.compile(r"[가-힣]")
_LATIN_WORD = r"[A-Za-z][A-Za-z0-9&+.'/-]*"
_HANGUL_WORD = r"[가-힣][가-힣0-9]*"
# "Term (번역)": Latin words right before a parenthesis holding Hangul (after an optional
# abbreviation: "PD, 프로듀서").
_PAREN_KO = re.compile(
    rf"((?:{_LATIN_WORD}[ ]){{0,{_MAX_WORDS - 1}}}{_LATIN_WORD})\s*\(([^()]{{1,{_MAX_CHARS}}})\)"
)
# "용어 (Term)" and "용어(Term)".
_PAREN_EN = re.compile(
    rf"((?:{_HANGUL_WORD}[ ]){{0,{_MAX_WORDS - 1}}}{_HANGUL_WORD})\s*\(([^()]{{1,{_MAX_CHARS}}})\)"
)
# "배포/deploy", "deploy/배포": one word each side, no spaces.
_SLASH_WORD = re.compile(rf"(?<![\w/])({_HANGUL_WORD})/({_LATIN_WORD})(?![\w/])"
                         rf"|(?<![\w/])({_LATIN_WORD})/({_HANGUL_WORD})(?![\w/])")  # fmt: skip
_ROW = re.compile(r"^\s*\|(.+)\|\s*$")
_CODE = re.compile(r"`[^`\n]*`")
_SEPARATOR = re.compile(r"^[\s|:-]+$")
# "**Term**: 정의", "Term : 정의", "- Term — 정의": a definition list entry.
# The term starts with a non-space, so the leading blanks are not shared between the two
# (shared, a line of blanks took seconds: tests/test_regex_linear.py).
_DEFINITION = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*)?([^:*—|\s][^:*—|]{0,39}?)(?:\*\*)?\s*[:—–]\s+(.+)$"
)
# Words a Latin run may start with that are not part of the term ("our SLO (...)").
_LEADING = frozenset(
    "a an the our your their its this that these those of for to in on at by with and or "
    "is are was be see use called named".split()
)
# A language's name in parentheses says which language a text is in ("FAQ (한국어)"), not
# what the term before it means.
_LANGUAGE_NAMES = frozenset("한국어 영어 한글 국문 영문 english korean".split())
# The last syllables of a Korean word that carries a particle or a verb ending.
_ENDINGS = frozenset("은는이가을를에의로와과도고며면서")
_CONFIDENCE = {
    "paren": 0.9, "slash": 0.9, "heading": 0.9, "table": 0.8, "definition": 0.7, "aligned": 0.5,
}  # fmt: skip


def mine_pairs(document: LoadedDocument) -> list[TermPair]:
    """Every pair the document's text, headings and title write down, once each."""
    found: dict[tuple[str, str], TermPair] = {}

    def add(ko: str, en: str, origin: str) -> None:
        ko, en = _clean(ko), _clean(en)
        if not _is_term(ko, korean=True) or not _is_term(en, korean=False):
            return
        if {ko.lower(), en.lower()} & _LANGUAGE_NAMES:
            return
        key = (ko.lower(), en.lower())
        if key not in found or found[key].confidence < _CONFIDENCE[origin]:
            found[key] = TermPair(ko, en, origin, _CONFIDENCE[origin])

    headings: list[str] = []
    for line in _lines(document):
        for ko, en, origin in _line_pairs(line):
            add(ko, en, origin)
    for section in document.sections:
        last = section.heading.split(" > ")[-1] if section.heading else ""
        if last and (not headings or headings[-1] != last):
            headings.append(last)
    for ko, en in _aligned(headings):
        add(ko, en, "aligned")
    return list(found.values())


def _lines(document: LoadedDocument) -> Iterable[str]:
    yield document.title
    for section in document.sections:
        yield from section.heading.split(" > ")
        yield from section.text.splitlines()


def _line_pairs(line: str) -> Iterable[tuple[str, str, str]]:
    """(Korean, English, origin) of each pair one line writes down."""
    # Code is a name in every language (`moonrise-backend-us`): it translates nothing.
    plain = _CODE.sub(" ", line).replace("**", "").strip().lstrip("#").strip()
    if not plain:
        return
    if (row := _ROW.match(plain)) and not _SEPARATOR.match(plain):
        yield from _row_pair([c.strip() for c in row.group(1).split("|")])
    halves = [h.strip() for h in plain.split(" / ")]
    if len(halves) == 2:
        yield from _either_way(halves[0], halves[1], "slash")
    # Two or more items in the other language are examples ("리포트(on-call shifts,
    # incidents)"), not a translation; one beside an abbreviation is ("(PD, 프로듀서)").
    for m in _PAREN_KO.finditer(plain):
        korean = [inside for inside in m.group(2).split(",") if _HANGUL.search(inside)]
        if len(korean) == 1:
            yield korean[0], _trim_english(m.group(1), len(korean[0].split()) + 1), "paren"
    for m in _PAREN_EN.finditer(plain):
        latin = [inside for inside in m.group(2).split(",") if not _HANGUL.search(inside)]
        if len(latin) == 1:
            yield _trim_korean(m.group(1), len(latin[0].split()) + 1), latin[0], "paren"
    for m in _SLASH_WORD.finditer(plain):
        ko, en = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        yield ko, en, "slash"
    if definition := _DEFINITION.match(plain):
        term, meaning = definition.group(1), definition.group(2).rstrip(".")
        yield from _either_way(term, meaning, "definition")


def _row_pair(cells: list[str]) -> Iterable[tuple[str, str, str]]:
    """A table row with one short Korean cell and one short English cell side by side: a
    glossary. Apart, they are two columns of a schedule or a list of owners ("| D-day |
    12:00 KST 오픈 | 라이브옵스 전원 |" pairs no term with its translation)."""
    korean = [i for i, c in enumerate(cells) if _HANGUL.search(c) and not re.search("[A-Za-z]", c)]
    english = [
        i for i, c in enumerate(cells) if c and not _HANGUL.search(c) and re.search("[A-Za-z]", c)
    ]
    if len(korean) == 1 and len(english) == 1 and abs(korean[0] - english[0]) == 1:
        yield cells[korean[0]], cells[english[0]], "table"


def _either_way(left: str, right: str, origin: str) -> Iterable[tuple[str, str, str]]:
    if _HANGUL.search(left) and not _HANGUL.search(right):
        yield left, right, origin
    elif _HANGUL.search(right) and not _HANGUL.search(left):
        yield right, left, origin


def _aligned(headings: list[str]) -> Iterable[tuple[str, str]]:
    """A document in both languages, one half after the other (a Korean page and its
    English page), with as many headings in each: headings in the same place translate
    each other."""
    korean = [h for h in headings if _HANGUL.search(h) and not re.search("[A-Za-z]{3}", h)]
    english = [h for h in headings if not _HANGUL.search(h)]
    if len(korean) >= 2 and len(korean) == len(english):
        yield from zip(korean, english, strict=True)


def _trim_english(phrase: str, most: int) -> str:
    """The term before the parenthesis, not the sentence it ends: an abbreviation with the
    capitalised words of its name ("Every service has an SLO" is "SLO", "Pangyo HQ" stays),
    else at most one word more than its translation, without a leading article or
    preposition."""
    words = phrase.split()
    if re.fullmatch(r"[A-Z][A-Z0-9&/-]+", words[-1]):
        # With the capitalised words of its name ("Pangyo HQ"), not the sentence's.
        named = words[-most:-1]
        while named and not named[0][0].isupper():
            named = named[1:]
        return " ".join([*named, words[-1]]) if all(w[0].isupper() for w in named) else words[-1]
    words = words[-most:]
    while len(words) > 1 and words[0].lower() in _LEADING:
        words = words[1:]
    return " ".join(words)


def _trim_korean(phrase: str, most: int) -> str:
    """The last words before the parenthesis, at most one more than its translation has,
    from the first that does not end in a particle or a verb ending ("증빙은 비즈플레이" is
    "비즈플레이")."""
    words = phrase.split()[-most:]
    while len(words) > 1 and words[0][-1] in _ENDINGS:
        words = words[1:]
    return " ".join(words)


def _clean(text: str) -> str:
    return " ".join(text.strip(" \t*_`\"'“”‘’.,;:-").split())


def _is_term(text: str, *, korean: bool) -> bool:
    if not text or len(text) > _MAX_CHARS or len(text.split()) > _MAX_WORDS:
        return False
    if korean:
        return bool(_HANGUL.search(text)) and not re.search("[A-Za-z]", text)
    # A channel, an address or a time is a name in both languages, not a translation.
    return (
        bool(re.match("[A-Za-z]", text))
        and not _HANGUL.search(text)
        and "@" not in text
        and not re.search(r"[a-z]\.[a-z]", text)
    )
