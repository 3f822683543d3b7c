"""The output guard: flag answers that are empty or only apologise, so callers can fall back."""

from __future__ import annotations

import re

from agent.guards.normalize import APOSTROPHES, SPACE, visible
from agent.guards.verdict import OutputQuality

__all__ = ["check_output"]

_CITATION = re.compile(r"\[\s*\d+(?:\s*[,\-–~]\s*\d+)*\s*\]|【\s*\d+\s*】")
_MIN_VISIBLE = 5
# Fewer content characters than this after dropping apology and "not found" wording means
# the answer says nothing; a Hangul syllable counts as three Latin letters.
_MIN_SUBSTANCE = 15
_DENSE_WEIGHT = 3

_APOLOGY_MARKERS = re.compile(
    r"\b(?:sorry|apolog(?:y|ies|ise|ize|ised|ized)|unfortunately|regrettably|i'?m\s+afraid|"
    r"i\s+am\s+afraid|(?:don'?t|do\s+not|didn'?t|did\s+not)\s+know|not\s+sure|no\s+idea|"
    r"(?:can'?t|cannot|can\s+not|couldn'?t|could\s+not|unable\s+to|not\s+able\s+to|"
    r"won'?t\s+be\s+able\s+to)\s+(?:help|assist|answer|find|provide|say|tell|determine|locate|"
    r"share|support|do)|(?:no|not\s+(?:find|locate)\s+any|(?:don'?t|do\s+not|doesn'?t|"
    r"does\s+not)\s+(?:have|contain|include|mention))\s+(?:\S+\s+){0,2}?(?:information|info|"
    r"details|data|answer|mention|record|documentation)|(?:beyond|outside)\s+(?:my|the)\s+"
    r"(?:scope|knowledge|capabilities))"
    r"|죄송|미안|유감스럽|안타깝|아쉽게도|모르겠|모릅니다|알\s*수\s*(?:가\s*)?없"
    r"|(?:도와|도움|답변|대답|안내|확인|제공|말씀|답)\S*\s*(?:수\s*(?:가\s*)?없|어렵|어려|힘들|곤란)"
    r"|찾(?:을|지)\s*(?:수\s*(?:가\s*)?없|못)|정보(?:가|는)?\s*(?:없|부족)"
    r"|(?:문서|자료|컨텍스트)\S*\s*(?:(?:관련|해당)\s*)?(?:(?:내용|정보|언급)\S*\s*)?없"
)
_WORD = re.compile(r"[^\W_]+")
_EN_FILLER = frozenset(
    """
    i im me my we our you your the a an to of in on at about for with from by that this these
    those it its there here is are was were be been being am any anything some but however so
    and or unfortunately regrettably sorry apologies apology apologize apologise afraid
    information info answer answers answered answering question questions help assist
    assistance relevant specific details detail provided provide documents document docs
    sources source context knowledge base available not no nothing do does did don t s m ll
    ve re d can cannot could couldn would wouldn will won should shouldn have has had haven
    hasn didn doesn isn wasn aren weren able unable find found locate know knew sure idea
    regarding related please try rephrasing rephrase again more enough data request say tell
    determine share support mention mentioned cover covered contain contains include includes
    check ingested ingest specifically currently such matter topic scope beyond outside
    capabilities record records documentation if what which who how where when why
    """.split()
)
_KO_PARTICLES = tuple(
    sorted(
        """
        에서는 에게서 으로는 으로서 으로써 에서도 이라는 이라고 라는 라고 에서 에는 에게 께서 으로
        까지 부터 처럼 보다 마다 이나 이랑 과는 와는 은 는 이 가 을 를 의 에 로 와 과 도 만 나 요
        """.split(),
        key=len,
        reverse=True,
    )
)
_KO_FILLER = frozenset(
    """
    수 것 점 등 저 제가 저는 저도 그건 그것 그거 이건 팀 요청 정보 내용 대한 대해
    대해서 있는 있습니다 다만 하지만 그러나 그런데 따라서 그래서 이 그 해 할 한 하는
    알 답 및 또는 더 좀 잘 해당 관련 현재 혹시
    드릴 드리기 주세요 부분 사항 경우 문의 질문 답변 대답 문서 자료 검색 결과 판단 판단하기
    """.split()
)
_KO_FILLER_PREFIXES = tuple(
    """
    죄송 미안 양해 부탁 없습 없어 없네 없는 없다 없으 않습 않아 않네 못했 못합 못하 못해 못찾
    어렵 모르 드릴 드리 드립 도와 도움 찾을 찾지 찾아 찾기 찾는 알수 알려 답변 답할 답하 대답
    문의 질문 문서 자료 해당 관련 제공 주어진 다시 시도 바꿔 바꾸 수집 검색 포함 언급 나와 나오
    기재 명시 확실 정확 현재 혹시 아쉽 안타깝 유감 곤란 힘들 가능 불가 주시 보시 확인해 확인이
    확인할 확인되 확인하 따르면 말씀 안내드 정보
    """.split()
)


def _weight(token: str) -> int:
    return sum(_DENSE_WEIGHT if ord(ch) >= 0x2E80 else 1 for ch in token)


def _korean_stem(token: str) -> str:
    for particle in _KO_PARTICLES:
        if token.endswith(particle) and len(token) > len(particle):
            return token[: -len(particle)]
    return token


def _drop_apologies(text: str) -> str:
    """Remove every word an apology marker touches, in single-space-separated ``text``.

    Korean verbs conjugate around the marker ("죄송합니다"), so whole words go. Done by
    hand because a regex with ``\\S*`` on both sides backtracks quadratically on long tokens.
    """
    kept: list[str] = []
    last = 0
    for m in _APOLOGY_MARKERS.finditer(text):
        if m.start() < last:
            continue
        start = max(last, text.rfind(" ", 0, m.start()) + 1)
        end = text.find(" ", m.end())
        kept.append(text[last:start])
        last = len(text) if end < 0 else end
    kept.append(text[last:])
    return " ".join(kept)


def _substance(text: str) -> int:
    """Content left once apology, "not found" and stock advice wording are dropped."""
    score = 0
    for token in _WORD.findall(_drop_apologies(text)):
        if token in _EN_FILLER or token in _KO_FILLER or token in _KO_PARTICLES:
            continue
        stem = _korean_stem(token)
        if stem in _KO_FILLER or stem.startswith(_KO_FILLER_PREFIXES):
            continue
        score += _weight(stem)
    return score


def check_output(answer: str) -> OutputQuality:
    """Flag an answer with nothing in it, or one that only apologises or says it doesn't know.

    An apology followed by real content passes, and so does an honest "the documents
    do not cover X" that names X or lists sources: only near-empty apologies fail.
    """
    text = _CITATION.sub(" ", visible(answer))
    chars = [ch for ch in text if not ch.isspace()]
    if len(chars) < _MIN_VISIBLE or not any(ch.isalnum() for ch in chars):
        return "empty"
    lowered = SPACE.sub(" ", text.casefold().translate(APOSTROPHES))
    if not _APOLOGY_MARKERS.search(lowered):
        return "pass"
    return "apology_only" if _substance(lowered) < _MIN_SUBSTANCE else "pass"
