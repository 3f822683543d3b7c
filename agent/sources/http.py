"""HTTP for the kinds that read web APIs and pages: one client, size limits, content types.

A page larger than ``max_bytes`` is never read whole: the body is streamed and dropped
at the limit, so one huge file cannot fill the bot's memory. Every request goes through
the address policy (agent/net/address_policy.py) and to the address it checked. A
page's redirects are followed by :func:`get` only within its site: a redirect elsewhere
comes back as :attr:`Fetched.redirect` for the caller to report.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urldefrag, urljoin

import httpx

from agent.net.address_policy import AddressPolicy, same_site
from agent.net.guarded import FetchRefused, GuardedTransport
from agent.retrieval import loaders
from agent.sources.base import SourceError, SourceSpec

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
MAX_REDIRECTS = 5
USER_AGENT = "teamrag-sync/0.1 (+https://github.com/teamrag)"


def loader_name(content_type: str) -> str | None:
    """The loader file name for a Content-Type, None when we cannot read it (the one
    list of types is agent/retrieval/loaders: FILE_TYPES)."""
    return loaders.loader_name(content_type)


@dataclass(frozen=True)
class Fetched:
    url: str  # after redirects
    status: int
    headers: httpx.Headers
    body: bytes
    too_large: bool = False
    redirect: str | None = None  # where it redirects, when that is another site (not fetched)


def client(
    timeout_s: float,
    policy: AddressPolicy,
    headers: dict[str, str] | None = None,
    *,
    follow_redirects: bool = False,
) -> httpx.Client:
    """A client whose every request (and redirect hop) passes ``policy``. Pages keep
    ``follow_redirects`` off: :func:`get` follows them within the site. The API kinds
    turn it on: their downloads are served from another host (Confluence attachments
    from Atlassian's media host), each hop still checked by the policy."""
    return httpx.Client(
        timeout=timeout_s,
        follow_redirects=follow_redirects,
        headers={"User-Agent": USER_AGENT, **(headers or {})},
        # Pages are fetched by a few threads at once (web.py): a pool for each.
        transport=GuardedTransport(
            policy,
            httpx.HTTPTransport(
                limits=httpx.Limits(max_connections=16, max_keepalive_connections=16)
            ),
        ),
    )


def max_bytes(spec: SourceSpec) -> int:
    return int(spec.option("max_bytes", DEFAULT_MAX_BYTES))


def get(http: httpx.Client, url: str, *, limit: int, **kwargs: Any) -> Fetched:
    """GET ``url``, reading at most ``limit`` bytes of body, following redirects within
    the site. Network errors (and refusals, :class:`FetchRefused`) propagate."""
    for _ in range(MAX_REDIRECTS + 1):
        with http.stream("GET", url, **kwargs) as response:
            location = response.headers.get("location")
            if response.is_redirect and location:
                target = urldefrag(urljoin(url, location))[0]
                if not same_site(url, target):
                    status, headers = response.status_code, response.headers
                    return Fetched(url, status, headers, b"", redirect=target)
                url = target
                continue
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > limit:
                return Fetched(url, response.status_code, response.headers, b"", True)
            body = bytearray()
            for part in response.iter_bytes():
                body.extend(part)
                if len(body) > limit:
                    return Fetched(url, response.status_code, response.headers, b"", True)
            return Fetched(url, response.status_code, response.headers, bytes(body))
    raise httpx.TooManyRedirects(f"more than {MAX_REDIRECTS} redirects")


def describe(exc: httpx.HTTPError, url: str) -> str:
    if isinstance(exc, FetchRefused):
        return str(exc)  # names the address, why, and the opt-in
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
