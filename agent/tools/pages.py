"""``summarize_url``: fetch a web page and extract its text, safely.

The URL comes from chat text or an LLM's tool call, both untrusted, and the bot runs
inside the team's network: a fetch of ``http://10.0.0.5/admin`` or a cloud metadata
address would turn the bot into a proxy into that network (SSRF). So every address a
host name resolves to must be public, the request goes to the address that was checked
(a second lookup could answer differently: DNS rebinding), redirects are followed by
hand, only within the site, and checked hop by hop (the rule is
agent/net/address_policy.py), and the body is read up to a size limit within a time
limit. ``allow_private`` lifts the address rule for tests, whose servers listen on
127.0.0.1; the pinning still applies.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from urllib.parse import urljoin

import httpx

from agent.net.address_policy import AddressPolicy, AddressRefused, Unresolvable, same_site
from agent.net.guarded import pinned
from agent.tools.errors import ToolError

__all__ = ["FetchLimits", "check_url", "fetch_page", "pinned", "summarize_url"]

MAX_REDIRECTS = 3
MAX_TEXT_CHARS = 4000  # what the model is shown of a page


@dataclass(frozen=True)
class FetchLimits:
    max_bytes: int = 2_000_000
    timeout_s: float = 8.0
    allow_private: bool = False


# What lifts the address rule for summarize_url (bots/settings.py: allow_private_urls).
OPT_IN = "set TEAMRAG_ALLOW_PRIVATE_URLS=true (meant for tests on 127.0.0.1)"


async def check_url(url: str, allow_private: bool) -> str:
    """The address to connect to for ``url``; :class:`ToolError` unless ``url`` is http(s)
    and every address of its host is public (or private addresses are allowed)."""
    policy = AddressPolicy(allow_private=allow_private, opt_in=OPT_IN)
    try:
        return (await asyncio.to_thread(policy.check_url, url)).address
    except (AddressRefused, Unresolvable) as exc:
        raise ToolError(str(exc)) from None


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
                        target = urljoin(url, response.headers["location"])
                        if not same_site(url, target):
                            # Reported, not fetched: the model may ask for it by name.
                            raise ToolError(
                                f"{url} redirects to {target}, another site; not followed "
                                "(call summarize_url with that URL to read it)"
                            )
                        url = target
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
