"""HTTP for the kinds that read web APIs and pages: one client, size limits, content types.

A page larger than ``max_bytes`` is never read whole: the body is streamed and dropped
at the limit, so one huge file cannot fill the bot's memory.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from agent.sources.base import SourceError, SourceSpec

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
USER_AGENT = "teamrag-sync/0.1 (+https://github.com/teamrag)"

# Content type -> a file name whose extension picks the loader (agent/retrieval/loaders.py).
_LOADER_NAMES = {
    "text/html": "page.html",
    "application/xhtml+xml": "page.html",
    "text/plain": "page.txt",
    "text/markdown": "page.md",
    "text/x-markdown": "page.md",
    "application/pdf": "file.pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "file.docx",
}


def loader_name(content_type: str) -> str | None:
    """The loader file name for a Content-Type, None when we cannot read it."""
    return _LOADER_NAMES.get(content_type.split(";")[0].strip().lower())


@dataclass(frozen=True)
class Fetched:
    url: str  # after redirects
    status: int
    headers: httpx.Headers
    body: bytes
    too_large: bool = False


def client(timeout_s: float, headers: dict[str, str] | None = None) -> httpx.Client:
    return httpx.Client(
        timeout=timeout_s,
        follow_redirects=True,
        headers={"User-Agent": USER_AGENT, **(headers or {})},
        # Pages are fetched by a few threads at once (web.py): a pool for each.
        limits=httpx.Limits(max_connections=16, max_keepalive_connections=16),
    )


def max_bytes(spec: SourceSpec) -> int:
    return int(spec.option("max_bytes", DEFAULT_MAX_BYTES))


def get(http: httpx.Client, url: str, *, limit: int, **kwargs: Any) -> Fetched:
    """GET ``url``, reading at most ``limit`` bytes of body. Network errors propagate."""
    with http.stream("GET", url, **kwargs) as response:
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            return Fetched(str(response.url), response.status_code, response.headers, b"", True)
        body = bytearray()
        for part in response.iter_bytes():
            body.extend(part)
            if len(body) > limit:
                return Fetched(str(response.url), response.status_code, response.headers, b"", True)
        return Fetched(str(response.url), response.status_code, response.headers, bytes(body))


def describe(exc: httpx.HTTPError, url: str) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"{url}: no answer in time ({type(exc).__name__}); the server is slow or down"
    if isinstance(exc, httpx.ConnectError):
        return f"{url}: cannot connect ({exc}); check the address and that the server is up"
    return f"{url}: {type(exc).__name__}: {exc}"


def json_api(http: httpx.Client, method: str, url: str, *, service: str, **kwargs: Any) -> Any:
    """One JSON API call; any failure is a :class:`SourceError` naming the service and fix."""
    try:
        response = http.request(method, url, **kwargs)
    except httpx.HTTPError as exc:
        raise SourceError(f"{service}: {describe(exc, url)}") from None
    if response.status_code in (401, 403):
        raise SourceError(
            f"{service} refused the token (HTTP {response.status_code} at {url}): check the "
            "token in the variable named by --token-env and its access to this content"
        )
    if response.status_code >= 400:
        raise SourceError(
            f"{service} answered HTTP {response.status_code} at {url}: {response.text[:200]}"
        )
    try:
        return response.json()
    except ValueError:
        raise SourceError(f"{service} sent something that is not JSON at {url}") from None
