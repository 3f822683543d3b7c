"""The graph's state: what persists per thread, and what lives for one turn.

Persistent: ``messages`` (the thread's conversation, trimmed) and ``summary``
(what was trimmed away). Everything else belongs to the current turn; the
first node resets it, and ``finalize`` drops the bulky parts (the evidence
pool) so a thread's checkpoint stays small.

Keys written by parallel branches (retrieval per sub-question, the judge and
the speculative draft) have reducers; a reducer receiving :data:`RESET`
starts the value over for the new turn.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, TypedDict, get_origin, get_type_hints

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from agent.retrieval.types import Chunk, SearchHit

RESET: Any = None  # a reducer that receives None starts over

# Routes answered from retrieved evidence (the others answer directly).
RAG_ROUTES = ("knowledge", "analysis", "current_events")


class PoolItem(TypedDict):
    """One piece of evidence: a document chunk (with neighbours) or a web result."""

    id: str  # chunk id, or the URL of a web result
    doc_id: str
    text: str
    title: str
    source: str
    locator: str
    page: int | None
    heading: str
    link: str | None
    score: float
    kind: Literal["document", "web"]
    found_by: str  # the query that found it


class SubQuestion(TypedDict):
    id: int
    question: str
    priority: int  # 1 is most important
    depends_on: list[int]


class Plan(TypedDict):
    normalized: str
    sub_questions: list[SubQuestion]
    variations: list[str]
    answer_style: Literal["short", "normal", "detailed"]
    filters: dict[str, Any]  # source, title, page_from, page_to


class Judgement(TypedDict):
    """The judge's reading of the pool: order, sufficiency, what is missing (from the
    model's :class:`~agent.llm.schemas.Review`, or the local scores without one)."""

    ranking: list[str]  # pool ids, best first
    useful: int  # how many passages the judge found relevant
    score: float
    missing: list[str]
    decision: Literal["enough", "loop", "web", "give_up"]


class Check(TypedDict):
    grounded: bool
    answers_question: bool
    score: float
    reason: str


def pool_item(hit: SearchHit, found_by: str) -> PoolItem:
    chunk = hit.chunk
    return PoolItem(
        id=chunk.chunk_id,
        doc_id=chunk.doc_id,
        text=hit.context_text(),
        title=chunk.title,
        source=chunk.source,
        locator=chunk.locator(),
        page=chunk.page,
        heading=chunk.heading,
        link=chunk.link,
        score=round(hit.score, 4),
        kind="document",
        found_by=found_by,
    )


def hit_of(item: PoolItem) -> SearchHit:
    """The inverse of :func:`pool_item`, for the extractive answer, which reads hits."""
    chunk = Chunk(
        chunk_id=item["id"],
        doc_id=item["doc_id"],
        seq=0,
        text=item["text"],
        source=item["source"],
        title=item["title"],
        page=item["page"],
        heading=item["heading"],
        link=item["link"],
    )
    return SearchHit(chunk, item["score"])


def merge_pool(left: list[PoolItem] | None, right: list[PoolItem] | None) -> list[PoolItem]:
    """Accumulate evidence, de-duplicated by id; the pool only grows within a turn."""
    if right is None:
        return []
    merged = list(left or [])
    seen = {item["id"] for item in merged}
    for item in right:
        if item["id"] not in seen:
            seen.add(item["id"])
            merged.append(item)
    return merged


def add_or_reset(left: int | None, right: int | None) -> int:
    return 0 if right is None else (left or 0) + right


def any_or_reset(left: bool | None, right: bool | None) -> bool:
    return False if right is None else bool(left) or right


def extend_or_reset(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    return [] if right is None else [*(left or []), *right]


def merge_or_reset(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Merge counters and timings: numbers add up, other values are replaced."""
    if right is None:
        return {}
    merged = dict(left or {})
    for key, value in right.items():
        old = merged.get(key)
        if isinstance(value, int | float) and isinstance(old, int | float):
            merged[key] = old + value
        else:
            merged[key] = value
    return merged


def merge_by_key_or_reset(
    left: dict[str, dict[str, Any]] | None, right: dict[str, dict[str, Any]] | None
) -> dict[str, dict[str, Any]]:
    """Merge counters kept per name (usage per model): each inner dict merges like ``usage``."""
    if right is None:
        return {}
    merged = dict(left or {})
    for key, value in right.items():
        merged[key] = merge_or_reset(merged.get(key), value)
    return merged


class TurnInput(TypedDict):
    text: str
    user: str
    workspace: str
    scopes: list[str] | None
    thread_id: str
    persona: str  # the channel's persona line; "" = the process-wide one
    # The effective feature flags (settings, then the channel's, then the request's).
    features: dict[str, Any]


def fresh_turn(turn: TurnInput) -> dict[str, Any]:
    """The graph input for a new turn: the user's message and every per-turn key reset."""
    from langchain_core.messages import HumanMessage

    return {
        "messages": [HumanMessage(turn["text"])],
        "turn": turn,
        "features": dict(turn["features"]),
        "answer_model": "",
        "web_query": "",
        "path": RESET,
        "cached": None,
        "route": "",
        "route_confidence": 0.0,
        "complexity": "moderate",
        "needs_history": False,
        "plan": None,
        "review": None,
        "check": None,
        "next_step": "",
        "speculating": False,
        "block_reason": "",
        "standalone": "",
        "reply": "",
        "user_facts": [],
        "profile": "",
        "wave": 0,
        "iteration": 0,
        "web_searched": False,
        "draft": "",
        "draft_sources": [],
        "retries": 0,
        "feedback": "",
        "check_missing": [],
        "check_scores": RESET,
        "research_found": -1,
        "answer": "",
        "sources": [],
        "grounded": False,
        "covered": True,
        "degraded": RESET,
        "blocked": False,
        "pool": RESET,
        "seen": RESET,
        "searched": RESET,
        "score_history": RESET,
        "notes": RESET,
        "llm_calls": RESET,
        "usage": RESET,
        "usage_by_model": RESET,
        "timings": RESET,
    }


class AgentState(TypedDict, total=False):
    # -- persistent, per thread -------------------------------------------------
    messages: Annotated[list[AnyMessage], add_messages]
    summary: str

    # -- this turn ---------------------------------------------------------------
    turn: TurnInput
    features: dict[str, Any]  # seed 003's feature_flags for this turn (see agent.config)
    answer_model: str  # the model that wrote the answer ("" when no LLM wrote it)
    web_query: str  # the question refined into a search-engine query (seed 002/004)
    # The turn's way through the graph: one entry per node run (name, ms, decision).
    path: Annotated[list[dict[str, Any]], extend_or_reset]
    question: str  # the user's text, stripped
    language: str
    blocked: bool
    block_reason: str
    cached: dict[str, Any] | None
    route: str
    route_confidence: float
    complexity: Literal["simple", "moderate", "complex"]
    needs_history: bool
    standalone: str  # the question made self-contained with the thread history
    reply: str  # a direct reply prepared by the router (smalltalk, general)
    user_facts: list[dict[str, str]]
    profile: str  # what the bot remembers about the user, rendered for prompts
    plan: Plan | None
    wave: int  # which dependency level of sub-questions is being retrieved
    pool: Annotated[list[PoolItem], merge_pool]
    seen: Annotated[list[str], extend_or_reset]  # every chunk id retrieved this turn
    searched: Annotated[list[str], extend_or_reset]  # queries already searched this turn
    iteration: int
    next_step: str  # after a retrieval wave: "wave", "web" or "evaluate"
    speculating: bool  # the answer is drafted while the judge reads the evidence
    review: Judgement | None
    score_history: Annotated[list[float], extend_or_reset]
    web_searched: bool
    draft: str
    draft_sources: list[PoolItem]
    retries: int
    check: Check | None
    feedback: str  # why the last draft was rejected, fed back to the next one
    check_missing: list[str]  # what the last check said the passages lack: searched next
    check_scores: Annotated[list[float], extend_or_reset]  # each failed check's score
    research_found: int  # new passages the last search for missing facts found (-1: none ran)
    answer: str
    sources: list[PoolItem]
    grounded: bool
    covered: bool  # False: the documents do not answer the question, and the reply says so
    degraded: Annotated[bool, any_or_reset]  # the judge and a draft may both fall back
    notes: Annotated[list[str], extend_or_reset]
    llm_calls: Annotated[int, add_or_reset]
    usage: Annotated[dict[str, Any], merge_or_reset]
    usage_by_model: Annotated[dict[str, dict[str, Any]], merge_by_key_or_reset]
    timings: Annotated[dict[str, Any], merge_or_reset]


def _reducers() -> dict[str, Callable[[Any, Any], Any]]:
    hints = get_type_hints(AgentState, include_extras=True)
    return {
        key: hint.__metadata__[0]
        for key, hint in hints.items()
        if get_origin(hint) is Annotated and callable(hint.__metadata__[0])
    }


REDUCERS = _reducers()


def updated(state: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """The state as the graph will hold it once a node's ``update`` is applied: keys with
    a reducer merge through it, the others are replaced. A node that routes itself reads
    this view instead of having LangGraph copy every channel for a conditional edge."""
    merged = dict(state)
    for key, value in update.items():
        reducer = REDUCERS.get(key)
        merged[key] = reducer(state.get(key), value) if reducer is not None else value
    return merged
