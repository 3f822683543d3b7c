"""Following a passage's pointer to the document it names, within one knowledge base.

The shapes of a pointer and how a name finds its document are in
:mod:`agent.retrieval.pointers`; here the knowledge base answers which words of a
question say what it is about, which documents its best passages point to, and what
those documents hold for the question.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.retrieval.pointers import has_pointer, pointed_documents
from agent.retrieval.tokenizer import words
from agent.retrieval.types import SearchHit

# A passage found by following a pointer scores this share of the pointing one's.
POINTED_SHARE = 0.95


def followed(
    kb: KnowledgeBase,
    question: str,
    hits: Sequence[SearchHit],
    options: SearchOptions,
    *,
    subject: str | None = None,
    focus: Sequence[str] = (),
) -> list[SearchHit]:
    """The passages of the documents that ``hits`` point to on the question's subject
    ("See the IT Equipment FAQ"), searched with the question. ``subject`` is what the
    question is about, if not all of it (without "how long": a line with "long" in it is
    not on the subject); ``focus`` the thing it asks about ("which *laptop*"), on the
    subject however common its word is. Each ranks below the passage that points to it: a
    search within one document scores apart from the whole knowledge base (the fusion's
    cross-language credit applies to a document in the other language), and a pointer is
    a lead, not an answer."""
    pointing = [hit for hit in hits if has_pointer(hit.chunk.text)]
    if not pointing:
        return []
    glossary = kb.glossary()
    names = kb.document_names()
    specific = specific_words(kb, question if subject is None else subject) | set(focus)

    def counterparts(terms: Sequence[str]) -> dict[str, tuple[str, ...]]:
        return glossary.counterparts(terms, sounded=True)

    below: dict[str, float] = {}
    for hit in pointing:
        for doc_id in pointed_documents(specific, [hit.chunk.text], names, counterparts):
            if doc_id != hit.chunk.doc_id:
                below[doc_id] = max(below.get(doc_id, 0.0), POINTED_SHARE * hit.score)
    if not below:
        return []
    found_hits = kb.search(question, replace(options, documents=frozenset(below)))
    return [replace(hit, score=below[hit.chunk.doc_id]) for hit in found_hits]


def specific_words(kb: KnowledgeBase, text: str) -> set[str]:
    """The words of ``text`` at least as rare in the knowledge base as its average one:
    what a question is about ("laptop", not "pangyo" or "get")."""
    terms = list(dict.fromkeys(words(text)))
    index = kb.keyword_index()
    idf = {
        term: index.query_idf_sum([term_id])
        for term, term_id in zip(terms, kb.catalog.term_ids(terms), strict=True)
        if term_id is not None
    }
    mean = sum(idf.values()) / len(idf) if idf else 0.0
    return {term for term, value in idf.items() if value >= mean}
