"""The agent's knobs, in one frozen dataclass.

The agent never reads the environment: ``bots/wiring.py`` maps settings onto
this. Defaults are the seeds' values (sufficiency 0.7, 3 iterations, 3 answer
retries, cache similarity 0.9, 4,000-character input limit).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Features:
    """Optional stages; each can be switched off and the graph still answers."""

    cache: bool = True
    rerank: bool = True
    sufficiency_loop: bool = True
    groundedness_check: bool = True
    web_search: bool = True  # only used when a provider is configured
    user_memory: bool = True
    # Draft the answer while the judge reads the evidence (one round trip fewer).
    speculative_generation: bool = True


@dataclass(frozen=True)
class AgentConfig:
    features: Features = Features()
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
