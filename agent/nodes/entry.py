"""The first steps of every turn: the input guard, the answer cache and the user's
profile (read beside the cache lookup, for the router). No LLM here."""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from langgraph.runtime import Runtime

from agent.deps import Deps
from agent.guards import InputVerdict, check_input
from agent.memory.budget import TokenPlan
from agent.memory.profile import recall, render_profile, user_namespace
from agent.nodes.common import features_of, persona_of, timed
from agent.retrieval.tokenizer import tokenize
from agent.routing.intent import is_context_dependent
from agent.state import AgentState
from agent.wording.language import Language, detect_language, has_hangul
from agent.wording.progress import report


def scope_key(state: AgentState, deps: Deps) -> str:
    """Cache entries are shared only by turns that may see exactly the same documents,
    and whose answers were written under the same persona (a channel's tone or rules)."""
    turn = state["turn"]
    scopes = ",".join(sorted(turn["scopes"] or ["*default*"]))
    key = f"{turn['workspace']}|{scopes}"
    persona = persona_of(state, deps)
    if persona:  # no suffix without one, so existing entries stay valid
        key += "|persona:" + hashlib.sha256(persona.encode("utf-8")).hexdigest()[:16]
    return key


def same_subject(question: str, cached: str) -> bool:
    """Reject a semantic hit where each question has a term the other lacks.

    Embeddings put "connect to the VPN" and "disconnect from the VPN" at 0.94,
    and staging vs production backups at 0.90: above the seed's 0.9 threshold
    but different questions. A swapped term is the tell; a mere extra word
    ("며칠 동안") is a paraphrase.
    """
    mine, theirs = _subject_terms(question), _subject_terms(cached)
    return not (mine - theirs) or not (theirs - mine)


def _subject_terms(text: str) -> set[str]:
    """Terms of a question without a Korean closing predicate (하나요 / 해요 say the same)."""
    words = text.split()
    if words and has_hangul(words[-1]):
        words = words[:-1]
    return set(tokenize(" ".join(words)))


def has_history(state: AgentState) -> bool:
    return len(state.get("messages", [])) > 1 or bool(state.get("summary"))


@timed("input_guard")
async def input_guard(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    text = state["turn"]["text"]
    max_chars = runtime.context.config.max_input_chars

    def guard() -> tuple[Language, InputVerdict]:
        language = detect_language(text)
        return language, check_input(text, max_chars=max_chars, language=language)

    # Off the event loop: on a long message (TEAMRAG_MAX_INPUT_CHARS allows 100,000
    # characters) the patterns take a few hundred ms, which /healthz, the Slack ack
    # and every other turn would otherwise wait for.
    language, verdict = await asyncio.to_thread(guard)
    update: dict[str, Any] = {
        "question": text.strip(),
        "language": language,
        "blocked": verdict.blocked,
        "block_reason": verdict.reason or "",
    }
    if verdict.blocked:
        update |= {"route": "blocked", "reply": verdict.message}
    return update


async def _profile(state: AgentState, runtime: Runtime[Deps]) -> str:
    """What the user told earlier about themselves, as the router's prompt shows it."""
    deps = runtime.context
    if runtime.store is None or not features_of(state, deps).user_memory:
        return ""
    namespace = user_namespace(state["turn"]["workspace"], state["turn"]["user"])
    try:
        facts = await recall(runtime.store, namespace)
    except Exception:  # memory is a nicety; a broken store must not block the answer
        return ""
    budget = TokenPlan.for_context(deps.config.context_tokens).profile
    return render_profile(facts, budget, state["language"])


@timed("cache_lookup")
async def cache_lookup(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """The answer cache, and beside it the user's profile: two reads (a network round trip
    each in a team's deployment) that the router would otherwise wait for one by one."""
    profile = asyncio.create_task(_profile(state, runtime))
    try:
        found = await _cached(state, runtime.context)
    except BaseException:
        profile.cancel()
        raise
    if found.get("cached"):  # answered: the router will not run
        profile.cancel()
        return found
    return found | {"profile": await profile}


async def _cached(state: AgentState, deps: Deps) -> dict[str, Any]:
    if deps.cache is None or not features_of(state, deps).cache:
        return {}
    question = state["question"]
    history = has_history(state)
    cache = deps.cache
    catalog = deps.kb.catalog

    def lookup() -> Any:
        # "And the second one?" means something else in every thread: never serve it
        # from cache. Checked here, off the loop, as its patterns scan the whole message.
        if is_context_dependent(question, has_history=history):
            return None
        vector = deps.kb.embedder.embed_query(question)
        return cache.lookup(
            question, vector, scope_key(state, deps), catalog.document_versions, same_subject
        )

    try:
        hit = await asyncio.to_thread(lookup)
    except Exception as exc:  # a broken cache costs a cache miss, never the answer
        return {"notes": [f"answer cache unavailable ({type(exc).__name__}: {exc})"]}
    if hit is None:
        return {}
    report("cache", state["language"])
    return {
        "cached": {"question": hit.question, "similarity": round(hit.similarity, 3)},
        "route": "cached",
        "answer": hit.answer,
        "sources": hit.sources,
        "grounded": True,
    }
