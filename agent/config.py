"""The agent's knobs, in one frozen dataclass.

The agent never reads the environment: ``bots/wiring.py`` maps settings onto
this. Defaults are the seeds' values (sufficiency 0.7, 3 iterations, 3 answer
retries, cache similarity 0.9, 4,000-character input limit).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal

HallucinationPolicy = Literal["fallback", "warn", "block"]
POLICIES: tuple[HallucinationPolicy, ...] = ("fallback", "warn", "block")

# Seed 003's flag names for the stages that already had a name here.
FEATURE_ALIASES = {
    "active_retrieval": "sufficiency_loop",
    "quality_check": "groundedness_check",
}


class FeatureError(ValueError):
    """An unknown feature flag or a bad value; the message names it."""


@dataclass(frozen=True)
class Features:
    """Optional stages (seed 003's ``feature_flags``); each can be switched off and the graph
    still answers. Defaults come from settings; a channel and a single request may override
    them (:meth:`overridden`)."""

    cache: bool = True
    rerank: bool = True
    sufficiency_loop: bool = True  # "active retrieval": search again for what is missing
    groundedness_check: bool = True  # "quality check"
    web_search: bool = True  # only used when a provider is configured
    user_memory: bool = True
    # Draft the answer while the judge reads the evidence (one round trip fewer).
    speculative_generation: bool = True
    # Rewrite a draft the check rejected (and search for what it lacked) before giving up.
    self_refine: bool = True
    # Keep only the sentences of each passage that share words with the question.
    context_compression: bool = False
    # Off: every message is searched in the documents (no smalltalk, tools or creative path).
    routing: bool = True
    # k by the question's complexity; off: always the moderate k.
    dynamic_k: bool = True
    # Query variations and the history rewrite of follow-ups.
    query_rewrite: bool = True
    # What a draft that failed its checks becomes: the quoted sources (fallback), the draft
    # with a warning (warn), or a plain refusal (block).
    hallucination_policy: HallucinationPolicy = "fallback"

    def overridden(self, changes: Mapping[str, Any] | None) -> Features:
        """These flags with ``changes`` applied (seed 003 names accepted); raises
        :class:`FeatureError` for an unknown name or a value of the wrong kind."""
        if not changes:
            return self
        known = {f.name for f in fields(self)}
        clean: dict[str, Any] = {}
        for raw, value in changes.items():
            name = FEATURE_ALIASES.get(raw, raw)
            if name not in known:
                raise FeatureError(f"unknown feature {raw!r}; known: {', '.join(sorted(known))}")
            if name == "hallucination_policy":
                if value not in POLICIES:
                    raise FeatureError(f"hallucination_policy must be one of {', '.join(POLICIES)}")
            elif not isinstance(value, bool):
                raise FeatureError(f"feature {raw!r} must be true or false, got {value!r}")
            clean[name] = value
        return replace(self, **clean)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AgentConfig:
    features: Features = Features()
    # Seed 004's INTENT_MODEL_MAP: "route" or "route:complexity" -> a model name; "fast" and
    # "chat" name the two configured models. Unmapped routes use the fast model for
    # smalltalk/general and the chat model for the rest.
    route_models: Mapping[str, str] = field(default_factory=dict)
    # The creative path's tool-calling loop: at most this many rounds of tool calls.
    max_tool_rounds: int = 4
    # summarize_url: private-network addresses are refused unless this is set (tests).
    allow_private_urls: bool = False
    fetch_max_bytes: int = 2_000_000
    fetch_timeout_s: float = 8.0
    max_input_chars: int = 4000
    # Cache
    cache_threshold: float = 0.9
    cache_ttl_s: float = 24 * 3600.0
    # Routing
    # Below these the route falls back to searching the documents. The LLM's threshold is
    # seed 004's; the prototype router's confidence is calibrated so 0.5 means unsure.
    router_min_confidence: float = 0.7
    prototype_min_confidence: float = 0.5
    # Retrieval: k by complexity (the seed's dynamic k)
    k_simple: int = 4
    k_moderate: int = 6
    k_complex: int = 10
    max_subquestions: int = 4
    max_variations: int = 5
    neighbours: int = 1
    # Evidence shown to the LLM (after rerank)
    evidence_chunks: int = 8
    # Sufficiency loop
    min_sufficiency: float = 0.7
    max_iterations: int = 3
    stagnation_delta: float = 0.05
    min_documents_for_no_web: int = 3
    # Answer checks
    max_answer_retries: int = 3
    min_grounded_score: float = 0.7
    # Thread memory
    history_keep_messages: int = 12
    history_max_tokens: int = 3000
    context_tokens: int = 8000
    # Timezone for the date/time tool
    timezone: str = "Asia/Seoul"
    recursion_limit: int = 60
