"""HTTP under the address policy: every request is checked and sent to the checked address.

:class:`GuardedTransport` sits under an ``httpx.Client``: each request (each redirect hop
too, as httpx sends every hop through its transport) has its host resolved and checked
by the :class:`~agent.net.address_policy.AddressPolicy`, then goes to that address with
the original ``Host`` header and TLS server name, so the certificate is checked against
the name and a second DNS answer cannot send it elsewhere. A refused request never
reaches the inner transport: no connection is attempted.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import httpx

from agent.net.address_policy import AddressPolicy, AddressRefused, Unresolvable


class FetchRefused(httpx.TransportError):
    """The address policy refused the request (an httpx error, so callers that report
    network failures report this one too, with its message)."""


def pinned(url: str, address: str) -> tuple[str, dict[str, str], dict[str, str]]:
    """``url`` aimed at ``address``, with the Host header (and, for https, the TLS server
    name the certificate is checked against) of the original host."""
    parsed = urlsplit(url)
    host = parsed.hostname or ""
    ip = f"[{address}]" if ":" in address else address
    netloc = f"{ip}:{parsed.port}" if parsed.port else ip
    target = parsed._replace(netloc=netloc).geturl()
    headers = {"Host": f"{host}:{parsed.port}" if parsed.port else host}
    extensions = {"sni_hostname": host} if parsed.scheme == "https" else {}
    return target, headers, extensions


class GuardedTransport(httpx.BaseTransport):
    def __init__(self, policy: AddressPolicy, inner: httpx.BaseTransport | None = None) -> None:
        self.policy = policy
        self.inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        try:
            checked = self.policy.check_url(str(request.url))
        except (AddressRefused, Unresolvable) as exc:
            raise FetchRefused(str(exc), request=request) from None
        target, host, extensions = pinned(str(request.url), checked.address)
        # A new request: httpx builds the next redirect hop from the original one, which
        # must keep the host name (relative Location headers, the Host header).
        headers = httpx.Headers(request.headers)
        headers["Host"] = host["Host"]
        sent = httpx.Request(
            request.method,
            target,
            headers=headers,
            stream=request.stream,
            extensions={**request.extensions, **extensions},
        )
        return self.inner.handle_request(sent)

    def close(self) -> None:
        self.inner.close()
