"""/healthz, /readyz and /metrics over real HTTP, against a real Redis and the fake LLM."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from adapters.chat.metrics import Metrics
from agent.coordination.redis_connection import RedisConnection
from agent.events import Final, Turn, Usage
from agent.plumbing.urls import redact_url as redact
from bots.checks import Readiness, external_parts, readiness
from bots.ops import healthz_route, ops_server, start_ops_server
from bots.settings import Settings
from tests.fakes.openai_server import FakeOpenAI
from tests.support.redis_support import RedisServer
from tests.support.servers import free_port

EMBEDDED: dict[str, Any] = {
    "REDIS_URL": None,
    "CHROMA_URL": None,
    "DATABASE_URL": None,
    "OPENAI_API_KEY": None,
    "OPENAI_BASE_URL": None,
}


def settings(tmp_path: Path, **overrides: Any) -> Settings:
    return Settings(**({"data_dir": tmp_path / "data"} | EMBEDDED | overrides))


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=10)) as session:
        yield session


@pytest.fixture
async def serve() -> AsyncIterator[Any]:
    """Start ops servers on free ports; all are stopped after the test."""
    runners: list[web.AppRunner] = []

    async def start(checks: Readiness, metrics: Metrics) -> str:
        port = free_port()
        runners.append(await start_ops_server(port, "127.0.0.1", checks, metrics))
        return f"http://127.0.0.1:{port}"

    yield start
    for runner in runners:
        await runner.cleanup()


async def get(http: aiohttp.ClientSession, url: str) -> tuple[int, str, str]:
    async with http.get(url) as response:
        return response.status, response.headers["Content-Type"], await response.text()


async def test_healthz_and_an_embedded_setup_is_ready(
    tmp_path: Path, http: aiohttp.ClientSession, serve: Any
) -> None:
    base = await serve(readiness(settings(tmp_path)), Metrics())
    assert (await get(http, f"{base}/healthz"))[0::2] == (200, "ok")
    async with http.get(f"{base}/readyz") as response:
        assert response.status == 200
        body = await response.json()
    assert body["ready"] is True
    assert {c["part"] for c in body["checks"]} == {"Redis", "Chroma", "Postgres", "LLM"}
    assert not any(c["external"] for c in body["checks"])


async def test_readyz_follows_redis_down_and_back(
    tmp_path: Path,
    http: aiohttp.ClientSession,
    serve: Any,
    redis_server: RedisServer,
    redis_connection: RedisConnection,
) -> None:
    checks = readiness(
        settings(tmp_path, REDIS_URL=redis_connection.url), redis=redis_connection, cache_s=0
    )
    base = await serve(checks, Metrics())
    assert (await get(http, f"{base}/readyz"))[0] == 200
    redis_server.stop()
    try:
        async with http.get(f"{base}/readyz") as response:
            assert response.status == 503
            body = await response.json()
        # Alive all the same: an orchestrator must not restart a worker for Redis' sake.
        assert (await get(http, f"{base}/healthz"))[0] == 200
    finally:
        redis_server.start()
    assert body["ready"] is False
    (redis,) = [c for c in body["checks"] if c["part"] == "Redis"]
    assert redis["ok"] is False and redis["where"] == redis_connection.url
    assert "unset REDIS_URL" in redis["fix"] and redis["problem"]
    assert all(c["ok"] for c in body["checks"] if c["part"] != "Redis")
    assert (await get(http, f"{base}/readyz"))[0] == 200  # back


async def test_readiness_is_cached_against_probe_storms(
    tmp_path: Path, http: aiohttp.ClientSession, serve: Any, fake_llm: FakeOpenAI
) -> None:
    now = [100.0]
    config = settings(tmp_path, OPENAI_BASE_URL=fake_llm.base_url, OPENAI_API_KEY="x")
    parts, _ = external_parts(config)
    checks = Readiness(parts, cache_s=5, clock=lambda: now[0])
    base = await serve(checks, Metrics())

    statuses = await asyncio.gather(*(get(http, f"{base}/readyz") for _ in range(20)))
    assert {s[0] for s in statuses} == {200}
    assert fake_llm.models_calls == 1

    fake_llm.models_fail_with = 500
    assert (await get(http, f"{base}/readyz"))[0] == 200  # still the cached answer
    now[0] += 5
    status, _, text = await get(http, f"{base}/readyz")
    assert status == 503 and "HTTP 500" in text and "TEAMRAG_LLM=off" in text
    assert fake_llm.models_calls == 2


async def test_llm_key_refused_and_llm_unreachable(tmp_path: Path, fake_llm: FakeOpenAI) -> None:
    fake_llm.models_fail_with = 401
    refused = readiness(settings(tmp_path, OPENAI_BASE_URL=fake_llm.base_url, OPENAI_API_KEY="x"))
    (llm,) = [r for r in await refused.results() if r.part == "LLM"]
    assert llm.problem is not None and "401" in llm.problem
    assert llm.fix is not None and "OPENAI_API_KEY" in llm.fix

    gone = f"http://127.0.0.1:{free_port()}/v1"
    unreachable = readiness(settings(tmp_path, OPENAI_BASE_URL=gone), timeout_s=1)
    (llm,) = [r for r in await unreachable.results() if r.part == "LLM"]
    assert llm.external and llm.where == gone and llm.problem
    assert llm.fix is not None and "OPENAI_BASE_URL" in llm.fix


async def test_a_silent_server_times_out(tmp_path: Path) -> None:
    """A Chroma that accepts connections and never answers costs the probe its timeout."""
    accepted: list[asyncio.StreamWriter] = []

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted.append(writer)

    server = await asyncio.start_server(hold, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        checks = readiness(settings(tmp_path, CHROMA_URL=f"http://127.0.0.1:{port}"), timeout_s=0.3)
        (chroma,) = [r for r in await checks.results() if r.part == "Chroma"]
    finally:
        for writer in accepted:
            writer.close()
        server.close()
        await server.wait_closed()
    assert chroma.problem == "no answer within 0.3 s"
    assert chroma.fix is not None and "unset CHROMA_URL" in chroma.fix


async def test_metrics_show_an_observed_turn(
    tmp_path: Path, http: aiohttp.ClientSession, serve: Any
) -> None:
    metrics = Metrics()
    done = Final(
        answer="35 days",
        route="knowledge",
        usage_by_model={"gpt-4o": Usage(100, 20)},
        timings={"generate": 300.0, "total": 450.0},
    )
    await metrics.observe(Turn("q", platform="slack"), done)
    metrics.rate_limited("slack")
    base = await serve(readiness(settings(tmp_path)), metrics)
    status, content_type, text = await get(http, f"{base}/metrics")
    assert status == 200 and content_type.startswith("text/plain; version=0.0.4")
    assert 'teamrag_turns_total{platform="slack",route="knowledge"} 1.0' in text
    assert 'teamrag_llm_tokens_total{kind="prompt",model="gpt-4o"} 100.0' in text
    assert 'teamrag_stage_seconds_count{stage="generate"} 1.0' in text
    assert 'teamrag_rate_limited_total{platform="slack"} 1.0' in text

    # What Prometheus itself sends: OpenMetrics first.
    accept = "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5"
    async with http.get(f"{base}/metrics", headers={"Accept": accept}) as response:
        assert response.headers["Content-Type"].startswith("application/openmetrics-text")
        assert (await response.text()).endswith("# EOF\n")


async def test_healthz_mounts_alone_on_an_existing_app_and_the_server_can_be_off(
    tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    """The Slack HTTP server serves /healthz beside its own routes (and no more: see
    tests/test_slack_bot.py); port 0 starts nothing."""
    app = web.Application()

    async def events(request: web.Request) -> web.Response:
        return web.Response(text="slack")

    app.router.add_post("/slack/events", events)
    healthz_route(app)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        assert (await get(http, f"http://127.0.0.1:{port}/healthz"))[0] == 200
        assert (await get(http, f"http://127.0.0.1:{port}/readyz"))[0] == 404
        async with http.post(f"http://127.0.0.1:{port}/slack/events") as response:
            assert await response.text() == "slack"
    finally:
        await runner.cleanup()

    async with ops_server(0, readiness(settings(tmp_path)), Metrics()) as off:
        assert off is None


async def test_a_taken_port_names_the_setting(tmp_path: Path, serve: Any) -> None:
    checks, metrics = readiness(settings(tmp_path)), Metrics()
    base = await serve(checks, metrics)
    port = int(base.rsplit(":", 1)[1])
    with pytest.raises(OSError, match="TEAMRAG_OPS_PORT"):
        await start_ops_server(port, "127.0.0.1", checks, metrics)


def test_passwords_never_leave_the_url() -> None:
    assert redact("redis://:s3cret@redis:6379/0") == "redis://:***@redis:6379/0"
    assert redact("postgresql://app:s3cret@db/teamrag") == "postgresql://app:***@db/teamrag"
    assert redact("http://chroma:8000") == "http://chroma:8000"
