"""How each candidate sentence of an extractive answer is scored against the question.

The signals: the share of the question's terms a sentence holds (weighted by their rarity
among the candidates, counting a counterpart in the other language and a name a definition
gives), what its heading adds, the encoder's cosine, the kind of answer asked for, and for
a follow-up, the thread's own words and what it was already told. Choosing and quoting the
best ones is :mod:`agent.answers.extractive`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from agent.answers.candidates import Candidate
from agent.answers.kind import STRICT, Kind, holds_kind
from agent.retrieval.embeddings import Embedder
from agent.retrieval.tokenizer import tokenize
from agent.wording.language import Language, detect_language

# How a sentence is scored against the question, tuned with `teamrag eval` on 300 KorQuAD and
# 300 XQuAD questions (benchmarks/README.md): share of the question's terms, weighted by
# rarity among the candidate sentences, against the encoder's cosine; a lift for the
# passage retrieval ranked first (right about 95% of the time); a small one for a new number
# when the question asks how many, how much or when. Rarity among the candidates beat the
# keyword index's corpus IDF there (the gold span quoted for 0.90 of KorQuAD questions with
# IDF, 0.93 with rarity): what matters is which of these few sentences a term singles out.
_OVERLAP_WEIGHT = 0.8
# Across languages retrieval's first passage is right less than half the time (hit@1 0.44
# on the cross-language set), and the lift chose its sentences over the answer two or three
# passages down: a sentence in the other language gets it only when its passage also holds
# the other-language sentence closest in meaning (answers holding the gold 0.567 -> 0.603
# there, the same-language sets unchanged; with no lift at all across languages, the demo's
# "Postgres 백업은 며칠 동안 보관되나요?" quoted an unrelated table row third).
_FIRST_PASSAGE_BONUS = 0.15
# A sentence holding the kind of answer the question asks for (a time for "몇 시", an
# amount for "how much": agent/answers/kind.py).
# A place or a person can be named in too many ways for their shapes to count as much.
_KIND_BONUS = 0.15
_SOFT_KIND_BONUS = 0.05
_HEADING_SHARE = 0.5
# A sentence in the other language cannot share the question's words, only their
# translation: half of the weight of the words it lacks goes to the cosine instead. With
# none, the demo's Korean question still quoted page 3's "24시간 동안" line beside the English
# answer; with all of it, the encoder's loose cross-language cosine put an English line
# ahead of the Korean one that answers (samples/questions.jsonl, "SEV1 ... 확인").
_TRANSLATED = 0.5
# A sentence holding a question word's counterpart in the other language (agent/glossary:
# "handover" for 인수인계) holds the word, at this share of its weight: a pair can be loose.
_COUNTERPART = 0.8
# A follow-up ("Redis는요?", "Who approves it?") is searched as the earlier question plus
# itself, whose terms would otherwise pick the sentence the thread was already given: its
# own terms weigh this much more, and the sentence the previous answer led with this much
# less (only that one: the rows quoted beside it often hold what the thread asks next).
# On seven sample follow-ups ("Redis는요?" after the Postgres backups, "Who approves it?"
# after production access) three led with the earlier answer's line before, none now; at
# 0.5 instead of 0.7, "Where does it happen?" lost the handover line to an unrelated one.
_FOLLOW_UP_WEIGHT = 3.0
_QUOTED_BEFORE = 0.7


def score_sentences(
    question: str,
    language: Language,
    candidates: list[Candidate],
    embedder: Embedder,
    kind: Kind | None,
    follow_up: str | None = None,
    said: str = "",
    counterparts: Mapping[str, Sequence[str]] | None = None,
    named: Mapping[str, Sequence[str]] | None = None,
    counter: str | None = None,
) -> tuple[list[float], list[float], list[float], list[float]]:
    """Each sentence's score, with the signals it is made of: the share of the question's
    term weight the sentence holds, that share with what its heading adds, and its cosine
    with the question. ``kind`` is the kind of answer asked for (agent/answers/kind.py),
    ``counter`` the Korean counter a count is asked in (a Korean sentence holds it).
    A question word is held by its ``counterparts`` in a sentence in the other language,
    and by the names a definition gives it (``named``) in any sentence."""
    sentences = [c.text for c in candidates]
    dense = embedder.embed_documents(sentences) @ embedder.embed_query(question)
    tokens = [set(tokenize(s)) for s in sentences]
    # The question's terms in its own order: summed over a set of strings, the float
    # totals (and so a tie between two sentences) changed from one process to the next.
    weight = _rarity_weights(list(dict.fromkeys(tokenize(question))), tokens)
    if follow_up:
        own = set(tokenize(follow_up))
        weight = {t: w * _FOLLOW_UP_WEIGHT if t in own else w for t, w in weight.items()}
    mass = sum(weight.values()) or 1.0
    alternatives = _phrases_by_token(counterparts or {})
    names = _phrases_by_token(named or {})

    def held(term: str, sentence_tokens: set[str], translated: bool) -> float:
        if term in sentence_tokens:
            return 1.0
        # In the question's language its own words decide, or the names it describes.
        phrases = [*names.get(term, ()), *(alternatives.get(term, ()) if translated else ())]
        return _COUNTERPART if any(p <= sentence_tokens for p in phrases) else 0.0

    # The question's words in its own language's script: a sentence in the other language
    # holds them, if at all, translated. Numbers, and the Latin names and code in a Korean
    # question ("Postgres", "--prune"), read the same in both; in an English question a
    # name cannot be told from a word.
    worded = {t for t in weight if _is_hangul(t) == (language == "ko") and not t.isdigit()}
    scores, overlaps, subjects, cosines = [], [], [], []
    headings = {c.heading: set(tokenize(c.heading)) for c in candidates}
    translation = [detect_language(c.text) != language for c in candidates]
    lifted = _first_passage_lifted(candidates, translation, [float(c) for c in dense])
    for candidate, sentence_tokens, cosine, translated in zip(
        candidates, tokens, dense, translation, strict=True
    ):
        # A term the sentence's heading holds counts for part: "within 5 business days"
        # under "Closing and postmortem" answers a question about the postmortem.
        heading = headings[candidate.heading]
        holds = {t: held(t, sentence_tokens, translated) for t in weight}
        overlap = sum(w * holds[t] for t, w in weight.items()) / mass
        under = sum(w for t, w in weight.items() if t in heading and t not in sentence_tokens)
        similarity = float(cosine)
        meaning = 1 - _OVERLAP_WEIGHT
        if translated:
            # Term overlap cannot see a translation: the share of the question that such
            # a sentence may hold in other words is for the cosine to judge.
            unseen = sum(w for t, w in weight.items() if t in worded and not holds[t])
            meaning += _TRANSLATED * _OVERLAP_WEIGHT * unseen / mass
        # What the sentence says of the question's words, itself or through its context: a
        # sentence under a heading (or in a definition) that names the subject is on it.
        on_subject = overlap + _HEADING_SHARE * under / mass
        score = _OVERLAP_WEIGHT * on_subject + meaning * similarity
        if candidate.rank == 0 and (lifted or not translated):
            score += _FIRST_PASSAGE_BONUS
        if (
            kind is not None
            and (on_subject > 0 or translated)
            and holds_kind(candidate.text, kind, counter)
        ):
            # Only among sentences on the question's subject: any number is no answer.
            score += _KIND_BONUS if kind in STRICT else _SOFT_KIND_BONUS
        if said and candidate.text in said:
            score *= _QUOTED_BEFORE
        scores.append(score)
        overlaps.append(overlap)
        subjects.append(on_subject)
        cosines.append(similarity)
    return scores, overlaps, subjects, cosines


def _first_passage_lifted(
    candidates: Sequence[Candidate], translation: Sequence[bool], dense: Sequence[float]
) -> bool:
    """Whether the first passage's sentences in the other language get its lift: only when
    one of them is also the closest in meaning of all the other-language sentences, the one
    signal that reaches across languages."""
    other = [(c.rank, cos) for c, t, cos in zip(candidates, translation, dense, strict=True) if t]
    if not other:
        return False
    best = max(cos for _, cos in other)
    return any(rank == 0 and cos >= best for rank, cos in other)


def _phrases_by_token(phrases: Mapping[str, Sequence[str]]) -> dict[str, list[set[str]]]:
    """A question word's tokens (the word and its syllable pairs), each with the tokens of
    the phrases that stand for the word. A phrase is held when all of its words are:
    "launch" alone is not "soft launch"."""
    by_token: dict[str, list[set[str]]] = {}
    for word, others in phrases.items():
        sets = [set(tokenize(other)) for other in others]
        for token in tokenize(word):
            by_token.setdefault(token, []).extend(p for p in sets if p)
    return by_token


def _is_hangul(term: str) -> bool:
    return "가" <= term[0] <= "힣"


def _rarity_weights(query: list[str], sentences: list[set[str]]) -> dict[str, float]:
    """IDF of each query term among the candidate sentences.

    A term in every sentence ("team" in a table of team channels) says little;
    the one that singles out a line ("billing") decides which line answers.
    """
    n = len(sentences)
    return {term: math.log(1.0 + n / (1 + sum(term in s for s in sentences))) for term in query}
