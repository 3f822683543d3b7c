"""Prometheus metrics from finished turns: counts, latencies, tokens, and bounded labels."""

from __future__ import annotations

from collections.abc import AsyncIterator

from prometheus_client.parser import text_string_to_metric_families

from adapters.chat.metrics import OTHER, Metrics
from adapters.chat.observe import observed
from agent.events import Event, Final, Progress, Turn, Usage


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    return metrics.registry.get_sample_value(name, labels) or 0.0


def final(**overrides: object) -> Final:
    values: dict[str, object] = {
        "answer": "ok",
        "route": "knowledge",
        "timings": {"router": 20.0, "generate": 800.0, "total": 1500.0},
    }
    return Final(**(values | overrides))  # type: ignore[arg-type]


async def test_a_turn_counts_route_stages_latency_and_tokens() -> None:
    metrics = Metrics()
    usage = {"gpt-4o-mini": Usage(120, 30), "gpt-4o": Usage(900, 200)}
    await metrics.observe(Turn("q", platform="slack"), final(usage_by_model=usage))

    assert sample(metrics, "teamrag_turns_total", platform="slack", route="knowledge") == 1
    assert sample(metrics, "teamrag_stage_seconds_count", stage="generate") == 1
    assert sample(metrics, "teamrag_stage_seconds_sum", stage="generate") == 0.8
    assert sample(metrics, "teamrag_stage_seconds_bucket", stage="generate", le="0.5") == 0
    assert sample(metrics, "teamrag_stage_seconds_bucket", stage="generate", le="1.0") == 1
    # The turn's total is its own histogram, not a stage.
    assert sample(metrics, "teamrag_stage_seconds_count", stage="total") == 0
    assert sample(metrics, "teamrag_turn_seconds_sum", platform="slack") == 1.5
    assert sample(metrics, "teamrag_llm_tokens_total", model="gpt-4o", kind="prompt") == 900
    assert sample(metrics, "teamrag_llm_tokens_total", model="gpt-4o", kind="completion") == 200
    assert sample(metrics, "teamrag_llm_tokens_total", model="gpt-4o-mini", kind="prompt") == 120
    assert sample(metrics, "teamrag_cache_hits_total") == 0
    assert sample(metrics, "teamrag_errors_total", kind="turn") == 0


async def test_cached_degraded_error_and_refused_turns() -> None:
    metrics = Metrics()
    turn = Turn("q", platform="discord")
    await metrics.observe(turn, final(route="cached", cached=True))
    await metrics.observe(turn, final(route="blocked", blocked=True))
    await metrics.observe(turn, final(degraded=True))
    await metrics.observe(turn, final(route="error", degraded=True))
    metrics.rate_limited("discord")
    metrics.rate_limited("discord")
    metrics.error("delivery")

    assert sample(metrics, "teamrag_cache_hits_total") == 1
    assert sample(metrics, "teamrag_turns_total", platform="discord", route="cached") == 1
    assert sample(metrics, "teamrag_turns_total", platform="discord", route="blocked") == 1
    assert sample(metrics, "teamrag_degraded_turns_total", platform="discord") == 2
    assert sample(metrics, "teamrag_errors_total", kind="turn") == 1
    assert sample(metrics, "teamrag_errors_total", kind="delivery") == 1
    assert sample(metrics, "teamrag_rate_limited_total", platform="discord") == 2


async def test_label_values_stay_bounded() -> None:
    """Unknown stages and platforms, and an endless stream of model names, cannot create
    an endless number of time series."""
    metrics = Metrics()
    many_models = {f"model-{i}": Usage(1, 1) for i in range(40)}
    timings = {"router": 1.0, "a-stage-nobody-listed": 5.0, "total": 10.0}
    await metrics.observe(
        Turn("q", platform="p0"), final(timings=timings, usage_by_model=many_models)
    )
    for i in range(1, 10):
        await metrics.observe(Turn("q", platform=f"p{i}"), final())
    for i in range(100):
        metrics.error(f"kind-{i}")

    families = {f.name: f for f in text_string_to_metric_families(metrics.exposition()[0].decode())}
    stages = {s.labels["stage"] for s in families["teamrag_stage_seconds"].samples}
    assert stages == {"router", "generate", OTHER}
    platforms = {s.labels["platform"] for s in families["teamrag_turns"].samples}
    assert len(platforms) <= 5 and OTHER in platforms
    models = {s.labels["model"] for s in families["teamrag_llm_tokens"].samples}
    assert len(models) == 21 and OTHER in models
    # No token is lost by capping: the overflow is counted under "other".
    assert sample(metrics, "teamrag_llm_tokens_total", model=OTHER, kind="prompt") == 20
    kinds = {s.labels["kind"] for s in families["teamrag_errors"].samples}
    assert len(kinds) == 31 and OTHER in kinds


async def test_each_metrics_object_owns_its_registry() -> None:
    first, second = Metrics(), Metrics()
    await first.observe(Turn("q", platform="slack"), final())
    assert sample(first, "teamrag_turns_total", platform="slack", route="knowledge") == 1
    assert sample(second, "teamrag_turns_total", platform="slack", route="knowledge") == 0
    body, content_type = first.exposition()
    assert content_type.startswith("text/plain; version=")
    assert b"process_resident_memory_bytes" in body  # the worker's own health, too


async def test_observe_is_an_observer_of_the_chat_run() -> None:
    """Wired the way the bots wire it: every Final reaches the metrics."""
    metrics = Metrics()

    async def run(turn: Turn) -> AsyncIterator[Event]:
        yield Progress("search", "Searching")
        yield final(route="smalltalk", timings={"direct_response": 3.0, "total": 4.0})

    watched = observed(run, [metrics.observe])
    events = [e async for e in watched(Turn("hi", platform="slack"))]
    await watched.drain()

    assert isinstance(events[-1], Final)
    assert sample(metrics, "teamrag_turns_total", platform="slack", route="smalltalk") == 1
    assert sample(metrics, "teamrag_stage_seconds_count", stage="direct_response") == 1
