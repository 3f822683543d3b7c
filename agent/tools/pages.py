"""``summarize_url``: fetch a web page and extract its text, safely.

The URL comes from chat text or an LLM's tool call, both untrusted, and the bot runs
inside the team's network: a fetch of ``http://10.0.0.5/admin`` or a cloud metadata
address would turn the bot into a proxy into that network (SSRF). So every address a
host name resolves to must be public, the request goes to the address that was checked
(a second lookup could answer differently: DNS rebinding), redirects are followed by
hand and checked hop by hop, and the body is read up to a size limit within a time
limit. ``allow_private`` lifts the address rule for tests, whose servers listen on
127.0.0.1; the pinning still applies.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urljoin, urlparse

import httpx

from agent.tools.errors import ToolError

MAX_REDIRECTS = 3
MAX_TEXT_CHARS = 4000  # what the model is shown of a page


@dataclass(frozen=True)
class FetchLimits:
    max_bytes: int = 2_000_000
    timeout_s: float = 8.0
    allow_private: bool = False


def _refused(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


async def check_url(url: str, allow_private: bool) -> str:
    """The address to connect to for ``url``; :class:`ToolError` unless ``url`` is http(s)
    and every address of its host is public (or private addresses are allowed)."""
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ToolError(f"only http and https URLs can be fetched, not {url!r}")
    host = parsed.hostname
    try:
        infos = await asyncio.to_thread(
            socket.getaddrinfo, host, parsed.port or 443, type=socket.SOCK_STREAM
        )
    except OSError as exc:
        raise ToolError(f"cannot resolve {host}: {exc}") from exc
    addresses = [str(info[4][0]).split("%")[0] for info in infos]  # drop IPv6 zone ids
    for address in addresses:
        if not allow_private and _refused(address):
            raise ToolError(f"refused: {host} is a private or local address ({address})")
    if not addresses:
        raise ToolError(f"cannot resolve {host}: no address")
    return addresses[0]


def pinned(url: str, address: str) -> tuple[str, dict[str, str], dict[str, str]]:
    """``url`` aimed at ``address``, with the Host header (and, for https, the TLS server
    name the certificate is checked against) of the original host."""
    parsed = urlparse(url)
    host = parsed.hostname or ""
    ip = f"[{address}]" if ":" in address else address
    netloc = f"{ip}:{parsed.port}" if parsed.port else ip
    target = parsed._replace(netloc=netloc).geturl()
    headers = {"Host": f"{host}:{parsed.port}" if parsed.port else host}
    extensions = {"sni_hostname": host} if parsed.scheme == "https" else {}
    return target, headers, extensions


async def fetch_page(url: str, limits: FetchLimits, client: httpx.AsyncClient) -> str:
    """The page's HTML (or text), checked at every redirect, at most ``max_bytes``."""
    for _ in range(MAX_REDIRECTS + 1):
        address = await check_url(url, limits.allow_private)
        target, headers, extensions = pinned(url, address)
        try:
            async with asyncio.timeout(limits.timeout_s):
                async with client.stream(
                    "GET", target, headers=headers, extensions=extensions, follow_redirects=False
                ) as response:
                    if response.is_redirect and "location" in response.headers:
                        url = urljoin(url, response.headers["location"])
                        continue
                    if response.status_code >= 400:
                        raise ToolError(f"HTTP {response.status_code} from {url}")
                    body = bytearray()
                    async for piece in response.aiter_bytes():
                        body += piece
                        if len(body) > limits.max_bytes:
                            break  # the start of a huge page is still worth reading
                    encoding = response.encoding or "utf-8"
                    return bytes(body[: limits.max_bytes]).decode(encoding, errors="replace")
        except TimeoutError as exc:
            raise ToolError(f"{url} did not answer within {limits.timeout_s:g} s") from exc
        except httpx.HTTPError as exc:
            raise ToolError(f"cannot fetch {url} ({type(exc).__name__})") from exc
    raise ToolError(f"too many redirects from {url}")


def page_text(html: str) -> str:
    """The page's main text, by trafilatura (the same extractor ingestion uses)."""
    import trafilatura

    text = trafilatura.extract(html, include_comments=False, favor_recall=True) or ""
    text = " ".join(text.split())
    if not text:
        raise ToolError("the page has no readable text")
    return text[:MAX_TEXT_CHARS]


async def summarize_url(url: str, limits: FetchLimits, client: httpx.AsyncClient) -> str:
    html = await fetch_page(url.strip(), limits, client)
    return await asyncio.to_thread(page_text, html)
