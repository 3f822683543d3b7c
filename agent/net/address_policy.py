"""The one address rule for every fetch teamrag makes on a user's behalf.

teamrag runs inside the team's network, and the URLs it fetches come from people (a web
source, ``teamrag ingest URL``, a Confluence base URL) and from pages and models (links,
redirects, ``summarize_url``). Without a rule, a page answering ``302 Location:
http://10.0.0.5/admin`` or a URL naming ``169.254.169.254`` turns the bot into a proxy
into that network (SSRF). So every host is resolved, and every address it resolves to
must be public; the caller then connects to the address that was checked (a second
lookup could answer differently: DNS rebinding), and checks again at each redirect.

Python's ``ipaddress`` flags are not enough on their own: ``is_private`` misses
100.64.0.0/10 (CGNAT, where 100.100.100.200 is a cloud metadata address), multicast
is "global", and 6to4 (2002::/16), NAT64 (64:ff9b::/96) and IPv4-mapped addresses
carry an IPv4 address that is the real destination. Those are unwrapped first.

Intranet wikis are a real need: ``allow_private`` lifts the rule for one source (or one
``teamrag ingest``), and a refusal names that opt-in. The resolver is injectable so
tests check public names without DNS.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], list[str]]
"""host, port -> the addresses a connection could go to (strings)."""

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
# What inet_aton reads as an IPv4 address besides the dotted quad: 2130706433,
# 0x7f000001, 0177.0.0.1, 127.1. Browsers and libc accept them; ipaddress does not.
_NUMERIC_HOST = re.compile(r"^(?:0x[0-9a-f]*|\d+)(?:\.(?:0x[0-9a-f]*|\d+)){0,3}$", re.I)
DEFAULT_OPT_IN = "allow private addresses for this fetch (allow_private)"


class AddressRefused(Exception):
    """A URL whose host is (or resolves to) an address the policy refuses; the message
    names the address, why, and the opt-in."""


class Unresolvable(Exception):
    """The host has no address now (DNS down, a typo)."""


def system_resolver(host: str, port: int) -> list[str]:
    """The system's answer (getaddrinfo: /etc/hosts, then DNS)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise Unresolvable(f"cannot resolve {host}: {exc}") from None
    # IPv6 zone ids (fe80::1%eth0) are not part of the address.
    return list(dict.fromkeys(str(info[4][0]).split("%")[0] for info in infos))


def literal_address(host: str) -> IPAddress | None:
    """``host`` as an address when it is one, in any form libc would read."""
    text = host.strip("[]")
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        pass
    if _NUMERIC_HOST.match(text):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    return None


def _embedded(ip: IPAddress) -> tuple[ipaddress.IPv4Address | None, str]:
    """The IPv4 address an IPv6 address carries (mapped, 6to4, Teredo, NAT64), and how."""
    if isinstance(ip, ipaddress.IPv4Address):
        return None, ""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped, "IPv4-mapped"
    if ip.sixtofour is not None:
        return ip.sixtofour, "6to4"
    if ip.teredo is not None:
        return ip.teredo[1], "Teredo"
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF), "NAT64"
    return None, ""


def _range_refusal(ip: IPAddress) -> str | None:
    """Why an address (already unwrapped) is not public; None when it is."""
    checks: list[tuple[bool, str]] = [
        (ip.is_unspecified, "the unspecified address"),
        (ip.is_loopback, "a loopback address (this machine)"),
        (ip.is_link_local, "a link-local address (cloud metadata lives there)"),
        (isinstance(ip, ipaddress.IPv4Address) and ip in _CGNAT,
         "a shared (CGNAT, 100.64.0.0/10) address, where cloud metadata can live"),
        (ip.is_multicast, "a multicast address"),
        (ip.is_reserved, "a reserved address"),
        (ip.is_private, "a private-network address"),
        (isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local, "a site-local address"),
        (not ip.is_global, "not a public address"),
    ]  # fmt: skip
    return next((reason for refused, reason in checks if refused), None)


def refusal(ip: IPAddress) -> str | None:
    """Why the policy refuses ``ip`` (None: it is public). An IPv6 address carrying an
    IPv4 one is judged by the IPv4 one, the real destination; Teredo always refused."""
    inner, form = _embedded(ip)
    if inner is None:
        return _range_refusal(ip)
    reason = _range_refusal(inner)
    if reason is not None:
        return f"{reason}, in {form} form ({inner})"
    if form == "Teredo":
        return "a Teredo tunnel address"
    return None


@dataclass(frozen=True)
class Checked:
    """A URL that passed: where to connect, and the host name to present."""

    url: str
    host: str
    port: int
    address: str


@dataclass(frozen=True)
class AddressPolicy:
    """The rule, with its opt-in. ``opt_in`` is the sentence a refusal ends with: the
    flag or setting that lifts the rule where this policy applies."""

    allow_private: bool = False
    resolver: Resolver = field(default=system_resolver)
    opt_in: str = DEFAULT_OPT_IN

    def addresses(self, host: str, port: int) -> list[str]:
        """Every address of ``host``, each one allowed; :class:`AddressRefused` naming the
        first one that is not, :class:`Unresolvable` when there is none."""
        literal = literal_address(host)
        found = [str(literal)] if literal is not None else self.resolver(host, port)
        if not found:
            raise Unresolvable(f"cannot resolve {host}: no address")
        if self.allow_private:
            return found
        for address in found:
            reason = refusal(ipaddress.ip_address(address))
            if reason is not None:
                named = host if address == host.strip("[]") else f"{host} ({address})"
                raise AddressRefused(
                    f"refused to fetch from {named}: {reason}. teamrag reaches only public "
                    f"addresses unless told otherwise; for an intranet site, {self.opt_in}"
                )
        return found

    def check_url(self, url: str) -> Checked:
        """``url`` checked: http(s) only, its host allowed; the address to connect to."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise AddressRefused(f"only http and https URLs can be fetched, not {url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return Checked(url, parts.hostname, port, self.addresses(parts.hostname, port)[0])


def site(url: str) -> tuple[str, str, int]:
    """Scheme, host and port: what "the same site" compares."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme, (parts.hostname or "").lower(), port


def same_site(origin: str, target: str) -> bool:
    """Whether a redirect from ``origin`` to ``target`` stays on the site: the same host
    and port, or the same host moving from http to https on the default ports."""
    before, after = site(origin), site(target)
    if before == after:
        return True
    return before == ("http", after[1], 80) and after == ("https", after[1], 443)
