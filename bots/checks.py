"""Is every external part this process was configured with answering? For /readyz and
``teamrag doctor``.

Each part is embedded (always ready: it lives in this process and its data folder) or
external, with a probe that asks the server one cheap question under a short
timeout. A failed probe reports what went wrong and the fix, in words an operator
can act on. :class:`Readiness` keeps the answers for a few seconds, so a storm of
probes from a load balancer costs the servers one round of questions.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from agent.plumbing.urls import redact_url

if TYPE_CHECKING:
    from agent.coordination.redis_connection import RedisConnection
    from bots.settings import Settings

Probe = Callable[[], Awaitable[str | None]]
"""Returns None when the part answers, else what is wrong; may raise :class:`CheckFailed`."""


class CheckFailed(Exception):
    """A probe's problem with a fix more precise than its part's usual one."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.fix = fix


@dataclass(frozen=True)
class Part:
    name: str
    where: str  # "in-process", a data folder, or a URL without its password
    probe: Probe | None = None  # None: embedded
    fix: str = ""


@dataclass(frozen=True)
class CheckResult:
    part: str
    external: bool
    where: str
    problem: str | None = None
    fix: str | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.problem is None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"ok": self.ok}


def describe(exc: BaseException) -> str:
    """One line for a failed probe; a refused or unresolvable connection in plain words."""
    os_error = getattr(exc, "os_error", None)  # aiohttp's connection errors carry the cause
    if isinstance(os_error, socket.gaierror):
        return f"cannot resolve the host name ({os_error.strerror})"
    if isinstance(os_error, OSError) and os_error.errno:
        return f"cannot connect ({os.strerror(os_error.errno)})"
    text = " ".join(str(exc).split())  # psycopg's messages span lines
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def run_part(part: Part, timeout_s: float) -> CheckResult:
    if part.probe is None:
        return CheckResult(part.name, False, part.where)
    fix = part.fix
    try:
        async with asyncio.timeout(timeout_s):
            problem = await part.probe()
    except CheckFailed as exc:
        problem, fix = exc.problem, exc.fix
    except TimeoutError:
        problem = f"no answer within {timeout_s:g} s"
    except Exception as exc:  # a check reports; it never takes the endpoint down with it
        problem = describe(exc)
    if problem is None:
        return CheckResult(part.name, True, part.where)
    return CheckResult(part.name, True, part.where, problem=problem, fix=fix)


async def run_parts(parts: Sequence[Part], timeout_s: float) -> list[CheckResult]:
    return list(await asyncio.gather(*(run_part(p, timeout_s) for p in parts)))


class Readiness:
    """The configured parts' probes, answered from a short cache."""

    def __init__(
        self,
        parts: Sequence[Part],
        *,
        cache_s: float = 5.0,
        timeout_s: float = 2.0,
        owned: Sequence[RedisConnection] = (),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.parts = list(parts)
        self.cache_s = cache_s
        self.timeout_s = timeout_s
        self._owned = list(owned)
        self._clock = clock
        self._lock = asyncio.Lock()
        self._results: list[CheckResult] = []
        self._at: float | None = None

    async def results(self) -> list[CheckResult]:
        # Callers that arrive while a round is under way wait for it instead of starting one.
        async with self._lock:
            if self._at is None or self._clock() - self._at >= self.cache_s:
                self._results = await run_parts(self.parts, self.timeout_s)
                self._at = self._clock()
            return list(self._results)

    async def aclose(self) -> None:
        for redis in self._owned:
            await redis.aclose()


REDIS_FIX = (
    "start Redis at REDIS_URL (or correct it), or unset REDIS_URL to keep rate limits, cache "
    "and de-duplication in-process (one worker only)"
)
CHROMA_FIX = (
    "start the Chroma server at CHROMA_URL (`chroma run`, or its Docker image), or unset "
    "CHROMA_URL to keep the vectors in the data folder"
)
POSTGRES_FIX = (
    "start Postgres at DATABASE_URL and check its host, user, password and database, or unset "
    "DATABASE_URL to keep thread memory in SQLite files in the data folder"
)
LLM_FIX = (
    "start the server at OPENAI_BASE_URL (or correct it), or set TEAMRAG_LLM=off for "
    "extractive answers without an LLM"
)
LLM_KEY_FIX = "set OPENAI_API_KEY to a key this endpoint accepts"
OPENAI_BASE = "https://api.openai.com/v1"


async def http_get(
    url: str, *, headers: dict[str, str] | None = None, timeout_s: float = 2.0
) -> tuple[int, Any]:
    """Status and parsed JSON body (None when it is not JSON) of one GET."""
    import aiohttp  # here, not at the top: `teamrag ask` should not pay for it

    timeout = aiohttp.ClientTimeout(total=timeout_s)
    async with (
        aiohttp.ClientSession(timeout=timeout) as session,
        session.get(url, headers=headers) as response,
    ):
        try:
            body = await response.json(content_type=None)
        except ValueError:
            body = None
        return response.status, body


def redis_probe(redis: RedisConnection) -> Probe:
    return redis.problem


def chroma_probe(url: str, timeout_s: float) -> Probe:
    async def probe() -> str | None:
        status, _ = await http_get(f"{url.rstrip('/')}/api/v2/heartbeat", timeout_s=timeout_s)
        return None if status == 200 else f"heartbeat answered HTTP {status}"

    return probe


def postgres_probe(url: str, timeout_s: float) -> Probe:
    async def probe() -> str | None:
        import psycopg

        connection = await psycopg.AsyncConnection.connect(
            url, connect_timeout=max(1, round(timeout_s))
        )
        async with connection:
            await connection.execute("SELECT 1")
        return None

    return probe


def llm_probe(base_url: str, api_key: str | None, timeout_s: float) -> Probe:
    async def probe() -> str | None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        status, _ = await http_get(
            f"{base_url.rstrip('/')}/models", headers=headers, timeout_s=timeout_s
        )
        if status in (401, 403):
            raise CheckFailed(f"the endpoint refused the key (HTTP {status})", LLM_KEY_FIX)
        return None if status == 200 else f"GET /models answered HTTP {status}"

    return probe


def external_parts(
    settings: Settings, *, redis: RedisConnection | None = None, timeout_s: float = 2.0
) -> tuple[list[Part], list[RedisConnection]]:
    """One part per external service (embedded ones too, so a report names them all), and
    the Redis connection it opened for its probe (the caller closes it) when none was given."""
    owned: list[RedisConnection] = []
    parts: list[Part] = []
    if settings.redis_url:
        if redis is None:
            from agent.coordination.redis_connection import RedisConnection

            redis = RedisConnection(settings.redis_url, timeout_s=timeout_s)
            owned.append(redis)
        parts.append(Part("Redis", redact_url(settings.redis_url), redis_probe(redis), REDIS_FIX))
    else:
        parts.append(Part("Redis", "in-process (one worker only)"))
    if settings.chroma_url:
        url = settings.chroma_url
        parts.append(Part("Chroma", redact_url(url), chroma_probe(url, timeout_s), CHROMA_FIX))
    else:
        parts.append(Part("Chroma", f"data folder {settings.data_dir / 'chroma'}"))
    if settings.database_url:
        url = settings.database_url
        parts.append(
            Part("Postgres", redact_url(url), postgres_probe(url, timeout_s), POSTGRES_FIX)
        )
    else:
        parts.append(Part("Postgres", "SQLite files in the data folder"))
    if settings.llm_enabled or settings.embeddings == "openai":
        base = settings.openai_base_url or OPENAI_BASE
        probe = llm_probe(base, settings.openai_api_key, timeout_s)
        parts.append(Part("LLM", redact_url(base), probe, LLM_FIX))
    else:
        parts.append(Part("LLM", "none: extractive answers (quotes with citations)"))
    return parts, owned


def readiness(
    settings: Settings,
    *,
    redis: RedisConnection | None = None,
    cache_s: float = 5.0,
    timeout_s: float = 2.0,
) -> Readiness:
    """The readiness of the parts ``settings`` configure; pass the bot's own connection."""
    parts, owned = external_parts(settings, redis=redis, timeout_s=timeout_s)
    return Readiness(parts, cache_s=cache_s, timeout_s=timeout_s, owned=owned)
