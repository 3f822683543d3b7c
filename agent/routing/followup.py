"""A follow-up read against the thread without an LLM: "and p0?", "주말은요?" or "넘긴 건
언제까지 써야 돼요?" written out as a question that stands on its own.

A follow-up says only what changed; the previous question says the rest. Grammar tells
which of three readings a message has, never the topic's words:

- **contrast**: the message names a new focus and nothing else ("what about sev2?", "and the
  password?", "주말은요?"). It takes the place of its counterpart in the previous question
  (:mod:`agent.routing.slots`: sev1 for sev2, 평일 for 주말, name for password),
  which keeps its question word and so the kind of answer it asks for; a focus with no
  clear counterpart is added to the previous question.
- **condition**: the message is a condition alone ("토요일에 출근해서 일하면요?", "what if I'm
  remote?"). It replaces the previous question's condition, or is added to it.
- **carry**: the message asks a question of its own ("넘긴 건 언제까지 써야 돼요?", "and if
  she's out who's the backup?", "그 리뷰 미팅"). The previous question's subject is carried
  over without its question words: the follow-up's own question word decides the kind of
  answer asked for (:mod:`agent.answers.kind`), not the previous one's.

Every pattern here is a flat alternation or anchored at one end: linear on any input, and
a message longer than a follow-up is not rewritten word by word at all.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, NamedTuple

from agent.answers.kind import asked_kind
from agent.retrieval.embeddings import Similarity
from agent.retrieval.tokenizer import words
from agent.routing.bypass import without_pleasantries
from agent.routing.intent import is_acknowledgement, is_context_dependent
from agent.routing.slots import (
    COUNTERPART,
    EN_ASKS,
    KO_ASKS,
    PUNCT,
    asks,
    has_hangul,
    pair,
    slots_of,
    split_token,
)

Reading = Literal["contrast", "condition", "carry", "appended"]


class Resolution(NamedTuple):
    question: str  # the follow-up as a question of its own
    previous: str  # the earlier question it was read against (itself resolved)
    reading: Reading  # "appended": no counterpart found, the focus was added


# A follow-up is a short message. A longer one that is still context dependent is
# searched with the previous question in front of it, as it stands.
_MAX_CHARS = 200
# The previous question is read up to here (a pasted log is no question to carry over).
_MAX_PREVIOUS_CHARS = 400
# A follow-up of a follow-up is read against the one before it, this far back.
_MAX_DEPTH = 3

_I = re.IGNORECASE
# Openings that tie the message to the one before and carry no content of their own.
_EN_LEAD = re.compile(
    r"^(?:(?:and|or|but|also|so|then|ok|okay|oh|well|hmm|same|plus)\b[\s,]*)+", _I
)
_EN_CONTRAST_LEAD = re.compile(r"^(?:what|how) about\b\s*|^(?:same|also) (?:for|with)\b\s*", _I)
_EN_CONDITION = re.compile(r"^(?:what\s+)?(?:if|when|while|in case)\b", _I)
_EN_TAIL = re.compile(r"\s+(?:too|as well|also|then)\s*$", _I)
_KO_LEAD = re.compile(
    r"^(?:(?:그리고|그럼|그러면|그렇다면|근데|그런데|그래서|아니면|또|참|아|음|혹시)(?![가-힣])[\s,]*)+"
)
# Words that point back: the message is about the same thing, not a new focus.
_EN_POINTS_BACK = re.compile(r"\b(?:it|its|they|them|their|she|her|he|him|his|that|this)\b", _I)
_KO_POINTS_BACK = re.compile(
    r"(?<![가-힣])(?:그|이|저)(?:거|것|건|게|걸|분|쪽|곳|때|사람|중)?(?![가-힣])|거기|걔"
)
# The end of a Korean message that is a bare topic ("주말은요?", "p0는?", "스테이징도"), a
# condition ("일하면요?", "출장 갈 때는요?") or a predicate of its own ("써야 돼요?").
_KO_TOPIC_END = re.compile(
    r"(?:은|는|도|엔|에는|에선|에서는|으로는|로는|이랑은|하고는|이라면|라면)?요?$"
)
_KO_CONDITION_END = re.compile(r"(?:면|으면)요?$")
_KO_WHEN_WORD = re.compile(r"^(?:때|경우)(?:에|엔|에는|는|은|도)?요?$")
_KO_PREDICATE_END = re.compile(r"(?:요|까|니|냐|나|죠|지|줘|래|다|야|해|돼|어|아)$")


def resolve(
    message: str, earlier: Sequence[str], similarity: Similarity | None = None
) -> Resolution | None:
    """``message`` as a question of its own, read against ``earlier`` (the thread's previous
    messages from the user, oldest first), or None when there is no earlier question."""
    return _resolve(message, earlier, similarity, _MAX_DEPTH)


def _resolve(
    message: str, earlier: Sequence[str], similarity: Similarity | None, depth: int
) -> Resolution | None:
    previous = _previous_question(earlier, similarity, depth)
    if previous is None:
        return None
    text = message.strip()
    if len(text) > _MAX_CHARS:
        return Resolution(f"{previous} {text}", previous, "appended")
    korean = has_hangul(text)
    core, contrast_lead = _core(text, korean)
    if not core:
        return Resolution(previous, previous, "carry")
    reading = _reading(core, korean, contrast_lead)
    if reading == "carry":
        question = _carry(core, previous)
    elif reading == "condition":
        question = _condition(core, previous, korean, similarity)
    else:
        replaced = _contrast(core, previous, korean, similarity)
        if replaced is None:
            return Resolution(_appended(core, previous, korean), previous, "appended")
        question = replaced
    return Resolution(question, previous, reading)


def _previous_question(
    earlier: Sequence[str], similarity: Similarity | None, depth: int
) -> str | None:
    """The last earlier message that asks something, itself resolved if it was a follow-up."""
    cut = [m.strip()[:_MAX_PREVIOUS_CHARS] for m in earlier]
    at = next(
        (i for i in range(len(cut) - 1, -1, -1) if cut[i] and not is_acknowledgement(cut[i])), None
    )
    if at is None:
        return None
    last = without_pleasantries(cut[at])
    before = earlier[:at]
    if depth > 1 and before and is_context_dependent(last, has_history=True):
        resolved = _resolve(last, before, similarity, depth - 1)
        if resolved is not None:
            return resolved.question
    return last


def _core(text: str, korean: bool) -> tuple[str, bool]:
    """The message without the openings that tie it to the last one, and whether one of
    them asked for a contrast ("what about", "same for")."""
    core = text.strip(PUNCT)
    contrast = False
    for _ in range(3):  # "ok so what about ...": a few openings, each removed once
        before = core
        core = _EN_LEAD.sub("", core).strip(PUNCT)
        if _EN_CONTRAST_LEAD.match(core):
            core, contrast = _EN_CONTRAST_LEAD.sub("", core).strip(PUNCT), True
        if korean:
            core = _KO_LEAD.sub("", core).strip(PUNCT)
        if core == before:
            break
    core = _EN_TAIL.sub("", core).strip(PUNCT)
    return core, contrast


def _reading(core: str, korean: bool, contrast_lead: bool) -> Reading:
    last = core.split()[-1]
    if korean:
        if _KO_CONDITION_END.search(last) or _KO_WHEN_WORD.match(last):
            return "condition"
        if KO_ASKS.search(core) or _KO_POINTS_BACK.search(core):
            return "carry"
        end = _KO_TOPIC_END.search(last)
        bare = last[: end.start()] if end else last
        if end and end.group().rstrip("요"):
            return "contrast"  # a topic and its particle alone: "주말은요", "p0는"
        # A noun alone ("그 리뷰 미팅" aside, which points back) names a focus; a verb
        # ending ("써야 돼요") asks a question of its own.
        return "carry" if _KO_PREDICATE_END.search(bare) else "contrast"
    if _EN_CONDITION.match(core) and not EN_ASKS.search(_EN_CONDITION.sub("", core)):
        return "condition"
    if EN_ASKS.search(core) or (_EN_POINTS_BACK.search(core) and not contrast_lead):
        return "carry"
    return "contrast"


# --- carry -----------------------------------------------------------------------------


def _carry(core: str, previous: str) -> str:
    """The follow-up with the previous question's subject beside it: "넘긴 건 언제까지 써야
    돼요? (안 쓴 연차 내년으로 넘길)"."""
    question = _beside(core, _subject(previous, strict=False))
    if asked_kind(question) != asked_kind(core):
        # A word of the previous question still asks for its kind ("마감", "deadline"):
        # the follow-up's own question word decides.
        question = _beside(core, _subject(previous, strict=True))
    return question


def _beside(core: str, subject: str) -> str:
    return f"{core}? ({subject})" if subject else f"{core}?"


def _subject(previous: str, *, strict: bool) -> str:
    """What the previous question is about: its words without the ones that ask, trimmed
    of the grammar words at either end ("owns the payments server"). ``strict`` also
    drops the words that say which kind of answer it wanted ("deadline", "얼마까지")."""
    tokens = [t for t in previous.split() if not asks(t)]
    if strict:  # word by word: "몇 퍼센트로" cut inside a word would leave "센트로"
        tokens = [t for t in tokens if asked_kind(t) is None]
    content = [i for i, t in enumerate(tokens) if words(t)]
    if not content:
        return ""
    return " ".join(tokens[content[0] : content[-1] + 1]).strip(PUNCT)


# --- contrast --------------------------------------------------------------------------


def _focus(core: str, korean: bool) -> list[str]:
    """The new focus: the message's content words, their particles and 요 taken off."""
    out = []
    for token in core.split():
        stem = _KO_TOPIC_END.sub("", token) if korean else token
        stem = split_token(stem)[0] if korean else stem.strip(PUNCT)
        if stem and words(stem):
            out.append(stem)
    return out


def _contrast(core: str, previous: str, korean: bool, similarity: Similarity | None) -> str | None:
    """The previous question with the focus in place of its counterpart, or None when no
    word of it is one."""
    tokens = previous.split()
    slots = slots_of(previous)
    focus = _focus(core, korean)
    if not focus or not slots:
        return None
    pairs = {i: (focus[i], slot) for i, slot in pair(focus, slots, korean, similarity).items()}
    if not pairs:
        return None
    for word, slot in pairs.values():
        tokens[slot.at] = word + slot.rest
    # A focus word with no counterpart stays beside the one it came with: "the Redis
    # snapshots" puts "Redis" before the word "snapshots" replaced.
    before: dict[int, list[str]] = {}
    after: dict[int, list[str]] = {}
    paired = sorted(pairs)
    for i in range(len(focus)):
        if i in pairs:
            continue
        following = next((j for j in paired if j > i), None)
        if following is not None:
            before.setdefault(pairs[following][1].at, []).append(focus[i])
        else:
            after.setdefault(pairs[paired[-1]][1].at, []).append(focus[i])
    out = []
    for index, token in enumerate(tokens):
        out.extend(before.get(index, []))
        if index in after:
            bare = token.rstrip(PUNCT)
            out.extend([bare, *after[index]])
            out[-1] += token[len(bare) :]
        else:
            out.append(token)
    return " ".join(out)


def _appended(core: str, previous: str, korean: bool) -> str:
    if korean:
        return f"{core} {previous}"
    return f"{previous.rstrip(PUNCT)} {core}?"


# --- condition -------------------------------------------------------------------------


def _condition(core: str, previous: str, korean: bool, similarity: Similarity | None) -> str:
    """The previous question under the new condition: its own condition replaced."""
    tokens = previous.split()
    if korean:
        condition = re.sub(r"요$", "", core)
        at = _ko_condition_span(tokens)
        if at is None:
            return f"{condition} {previous}"
        start, end = at
        before = _unlike(tokens[:start], _focus(core, korean), similarity)
        return " ".join([*before, condition, *tokens[end:]])
    condition = re.sub(r"^what\s+", "", core, flags=_I)
    for i in range(1, len(tokens)):
        if tokens[i].lower() in ("if", "when", "while"):
            return " ".join([*tokens[:i], condition]) + "?"
    return f"{previous.rstrip(PUNCT)} {condition}?"


def _ko_condition_span(tokens: Sequence[str]) -> tuple[int, int] | None:
    """Where the previous question's condition clause ends ("야근하면", "출장 갈 때"): the
    span of its last word, with the verb before 때 or 경우."""
    for i in range(len(tokens) - 1, -1, -1):
        bare = tokens[i].rstrip(PUNCT)
        if re.search(r"(?:면|으면)$", bare):
            return i, i + 1
        if _KO_WHEN_WORD.match(bare) and i > 0:
            return i - 1, i + 1
    return None


def _unlike(
    tokens: Sequence[str], focus: Sequence[str], similarity: Similarity | None
) -> list[str]:
    """``tokens`` without the words the new condition stands in for ("평일에" before
    "야근하면" when the follow-up says "토요일에")."""
    if similarity is None or not focus or not tokens:
        return list(tokens)
    stems = [split_token(t)[0] for t in tokens]
    try:
        cosines = similarity(stems, list(focus))
    except Exception:
        return list(tokens)
    return [t for t, row in zip(tokens, cosines, strict=True) if float(row.max()) < COUNTERPART]
