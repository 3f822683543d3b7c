"""Prometheus metrics of the chat bots: what was answered, how fast, at what cost.

Every label value comes from a small known set or is capped (:class:`_Bounded`):
a label fed by user input or by whatever a provider names its models would grow
one time series per value, and a Prometheus server pays for each one forever.

A :class:`Metrics` owns its registry (never the process-wide default), so tests
and several bots in one process each count their own.
"""

from __future__ import annotations

from typing import get_args

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.exposition import choose_encoder
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

from agent.events import Final, Route, Turn

OTHER = "other"

PLATFORMS = frozenset({"slack", "discord", "cli"})
ROUTES = frozenset(get_args(Route))
# The graph's timed stages (agent/nodes: @timed names and the retrieval tasks) and the
# runner's wait for the thread lock; "total" is the turn itself (teamrag_turn_seconds).
STAGES = frozenset(
    {
        "input_guard",
        "cache_lookup",
        "router",
        "context_enhancement",
        "direct_response",
        "tools",
        "memory",
        "planner",
        "prefetch",
        "retrieve",
        "collect",
        "judge",
        "gate",
        "web_search",
        "generate",
        "verify",
        "output_guard",
        "fallback",
        "blocked_response",
        "finalize",
        "waited_for_thread",
    }
)
TOTAL = "total"

# Stages take milliseconds (guards) to tens of seconds (an answer from a slow model).
STAGE_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
TURN_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15, 20, 30, 60, 120)


class _Bounded:
    """Label values: the known ones, then the first ``cap`` others, then ``other``."""

    def __init__(self, known: frozenset[str] = frozenset(), cap: int = 0) -> None:
        self.known = known
        self.cap = cap
        self._extra: set[str] = set()

    def __call__(self, value: str) -> str:
        if value in self.known or value in self._extra:
            return value
        if len(self._extra) < self.cap:
            self._extra.add(value)
            return value
        return OTHER


class Metrics:
    """The bots' counters and histograms, on a registry of their own."""

    def __init__(self, registry: CollectorRegistry | None = None, *, process: bool = True) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        if process:  # memory, CPU, open files and GC of this worker, like any Python exporter
            ProcessCollector(registry=self.registry)
            PlatformCollector(registry=self.registry)
            GCCollector(registry=self.registry)
        r = self.registry
        self.turns = Counter(
            "teamrag_turns",
            "Turns answered, by platform and route.",
            ["platform", "route"],
            registry=r,
        )
        self.degraded = Counter(
            "teamrag_degraded_turns",
            "Turns answered by a stand-in because the LLM failed.",
            ["platform"],
            registry=r,
        )
        self.cache_hits = Counter(
            "teamrag_cache_hits", "Turns answered from the answer cache.", registry=r
        )
        self.rate_limited_turns = Counter(
            "teamrag_rate_limited",
            "Questions refused by the per-user rate limit.",
            ["platform"],
            registry=r,
        )
        self.errors = Counter(
            "teamrag_errors",
            "Failures by kind ('turn': a turn that ended in an error reply).",
            ["kind"],
            registry=r,
        )
        self.tokens = Counter(
            "teamrag_llm_tokens", "LLM tokens used, by model.", ["model", "kind"], registry=r
        )
        self.stage_seconds = Histogram(
            "teamrag_stage_seconds",
            "Time spent in each stage of a turn (parallel copies of a stage add up).",
            ["stage"],
            buckets=STAGE_BUCKETS,
            registry=r,
        )
        self.turn_seconds = Histogram(
            "teamrag_turn_seconds",
            "Time from the start of a turn (waiting for its thread included) to its answer.",
            ["platform"],
            buckets=TURN_BUCKETS,
            registry=r,
        )
        self._platform = _Bounded(PLATFORMS, cap=4)
        self._route = _Bounded(ROUTES)
        self._stage = _Bounded(STAGES)
        # Models come from the configuration, but a provider may report dated variants.
        self._model = _Bounded(cap=20)
        self._error_kind = _Bounded(frozenset({"turn"}), cap=30)

    async def observe(self, turn: Turn, final: Final) -> None:
        """Count one finished turn (an observer of adapters/chat/observe.py)."""
        platform = self._platform(turn.platform)
        self.turns.labels(platform=platform, route=self._route(final.route)).inc()
        if final.route == "error":
            self.error("turn")
        if final.degraded:
            self.degraded.labels(platform=platform).inc()
        if final.cached:
            self.cache_hits.inc()
        for model, usage in final.usage_by_model.items():
            label = self._model(model)
            self.tokens.labels(model=label, kind="prompt").inc(usage.prompt_tokens)
            self.tokens.labels(model=label, kind="completion").inc(usage.completion_tokens)
        for stage, ms in final.timings.items():
            if stage == TOTAL:
                self.turn_seconds.labels(platform=platform).observe(ms / 1000)
            else:
                self.stage_seconds.labels(stage=self._stage(stage)).observe(ms / 1000)

    def rate_limited(self, platform: str) -> None:
        self.rate_limited_turns.labels(platform=self._platform(platform)).inc()

    def error(self, kind: str) -> None:
        """Count a failure the adapters saw (``kind``: a short fixed word, e.g. "delivery")."""
        self.errors.labels(kind=self._error_kind(kind)).inc()

    def exposition(self, accept: str = "") -> tuple[bytes, str]:
        """The registry in the format the scraper's ``Accept`` header asks for (Prometheus
        text 0.0.4 by default, OpenMetrics on request), and its content type."""
        encode, content_type = choose_encoder(accept)
        return encode(self.registry), content_type
