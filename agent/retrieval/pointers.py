"""Pointers from one document to another, and the documents they name.

A handbook answers many questions by sending the reader elsewhere: "- **Which laptop will I
get?** See the IT Equipment FAQ.", "Schedule and retention are in the build & release
document.", "회의실 예약과 장비는 오피스 가이드를 참고하세요." The passage that points is
what a search finds (it shares the question's words); the answer is in the document it
names, which may share none of them. A person follows the pointer, and so does the search
(:func:`agent.retrieval.following.followed`): a line that holds one of the question's
words and names another document has that document searched too.

A document is named by its title or its file name ("the build & release document" is
``build-and-release.md``), in either language through the glossary ("오피스 가이드" is
``office-guide.html``): the words of the name, less generic ones ("document", "문서"),
must be at least two thirds the document's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from agent.retrieval.tokenizer import words

# "See the IT Equipment FAQ", "are in the office guide", "refer to our Data & Privacy FAQ".
_EN = re.compile(
    r"\b(?:see|check|read|consult|refer to|(?:is|are|lives?|described|covered|explained|"
    r"listed|documented) in)\s+(?:the\s+|our\s+)?(?P<name>[^.;:!?()\n]{3,60})",
    re.IGNORECASE,
)
# The name ends where the sentence goes on about something else: "see the Data & Privacy
# Handling FAQ rather than the data platform team".
_EN_END = re.compile(
    r"\s(?:rather|instead|for|if|when|to|or|before|after|which|that|and ask|above|below)\b.*",
    re.IGNORECASE,
)
# "팀 디렉터리를 참고하세요", "오피스 가이드를 보세요": up to three words before the particle,
# from the start of a word (from any letter, a 4,000-character run took 0.3 s).
_KO = re.compile(
    r"(?<!\S)(?P<name>(?:[^\s.,:;()]+\s){0,3}[^\s.,:;()]+?)(?:을|를|에서|에)\s?"
    r"(?:참고|참조|보세요|봐\s?주세요|확인하세요|확인해\s?주세요)"
)
# Words that say "a document" without naming one.
_GENERIC = frozenset(
    "document documents doc docs page pages wiki section 문서 페이지 위키 섹션 각".split()
)
_NAMED_SHARE = 2 / 3

# A text's words to their counterparts in the other language (the glossary's).
Counterparts = Callable[[Sequence[str]], Mapping[str, Sequence[str]]]


@dataclass(frozen=True)
class Named:
    """A document a pointer can name: its id and the words of its title and file name."""

    doc_id: str
    words: frozenset[str]


def document_names(documents: Iterable[tuple[str, str, str]]) -> list[Named]:
    """Each ``(doc_id, source, title)`` as the words it can be named by."""
    named = []
    for doc_id, source, title in documents:
        stem = PurePosixPath(source.replace("\\", "/")).stem.replace("-", " ").replace("_", " ")
        named.append(Named(doc_id, frozenset(words(f"{title} {stem}"))))
    return named


def has_pointer(text: str) -> bool:
    """Whether ``text`` may point to another document (a cheap test before reading it)."""
    return bool(_EN.search(text) or _KO.search(text))


def pointer_names(line: str) -> list[list[list[str]]]:
    """The names ``line`` points the reader to: for each pointer, the ways to read its
    name, longest first, each as its words (generic ones dropped)."""
    pointers: list[list[list[str]]] = []
    for match in _EN.finditer(line):
        name = _EN_END.sub("", match.group("name"))
        pointers.append([[w for w in words(name) if w not in _GENERIC]])
    for match in _KO.finditer(line):
        found = [w for w in words(match.group("name")) if w not in _GENERIC]
        # A Korean name ends at its particle and starts anywhere in the words before it:
        # "회의실 예약과 장비는 오피스 가이드를" names "오피스 가이드".
        pointers.append([found[start:] for start in range(len(found))])
    return [[name for name in names if name] for names in pointers]


def named_document(
    name: Sequence[str], documents: Sequence[Named], counterparts: Counterparts
) -> str | None:
    """The one document whose title or file name holds at least two thirds of ``name``'s
    words (a word also by its counterpart in the other language), or None."""
    others = counterparts(name)
    spellings = [{word, *others.get(word, ())} for word in name]
    best: list[str] = []
    best_share = 0.0
    for document in documents:
        held = sum(1 for spelled in spellings if spelled & document.words)
        share = held / len(spellings)
        if share > best_share:
            best, best_share = [document.doc_id], share
        elif share == best_share and share > 0:
            best.append(document.doc_id)
    return best[0] if best_share >= _NAMED_SHARE and len(best) == 1 else None


def pointed_documents(
    asked: set[str],
    texts: Iterable[str],
    documents: Sequence[Named],
    counterparts: Counterparts,
) -> list[str]:
    """The documents that the lines of ``texts`` on the question's subject (holding one of
    the words ``asked``) point to, in the order they are named."""
    found: list[str] = []
    for text in texts:
        for line in text.splitlines():
            if not asked & set(words(line)):
                continue
            for names in pointer_names(line):
                named = (named_document(name, documents, counterparts) for name in names)
                doc_id = next((d for d in named if d is not None), None)
                if doc_id is not None and doc_id not in found:
                    found.append(doc_id)
    return found
