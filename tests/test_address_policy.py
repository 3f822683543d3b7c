"""The one address rule (agent/net/address_policy.py) over every range it refuses, and
the transport that applies it. Nothing here leaves the machine: names resolve through a
stub resolver (``localhost`` through the system's, which answers from /etc/hosts), and a
refused request is proved by an inner transport that fails the test if it is called."""

from __future__ import annotations

import httpx
import pytest

from agent.net.address_policy import (
    AddressPolicy,
    AddressRefused,
    literal_address,
    refusal,
    same_site,
    system_resolver,
)
from agent.net.guarded import FetchRefused, GuardedTransport
from agent.tools.errors import ToolError
from agent.tools.pages import FetchLimits, summarize_url
from tests.fakes.web_site import FakeSite, html_page

PUBLIC = "93.184.216.34"


def resolving_to(*addresses: str) -> tuple[AddressPolicy, list[str]]:
    """A policy whose resolver answers ``addresses`` for any name, and the names asked."""
    asked: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        asked.append(host)
        return list(addresses)

    return AddressPolicy(resolver=resolver, opt_in="pass --allow-private"), asked


class NoConnection(httpx.BaseTransport):
    """An inner transport that must never be reached."""

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        pytest.fail(f"a connection was attempted to {request.url}")


class Recorder(httpx.BaseTransport):
    def __init__(self) -> None:
        self.sent: list[httpx.Request] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.sent.append(request)
        return httpx.Response(200, text="ok")


@pytest.mark.parametrize(
    ("host", "why"),
    [
        ("127.0.0.1", "loopback"),
        ("[::1]", "loopback"),
        ("2130706433", "loopback"),  # decimal 127.0.0.1
        ("0x7f000001", "loopback"),  # hexadecimal
        ("0177.0.0.1", "loopback"),  # octal
        ("127.1", "loopback"),  # short form
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("172.31.255.254", "private"),
        ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"),  # AWS/GCP/Azure metadata
        ("100.64.0.1", "CGNAT"),
        ("100.100.100.200", "CGNAT"),  # Alibaba metadata
        ("100.127.255.254", "CGNAT"),
        ("0.0.0.0", "unspecified"),
        ("[::]", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("[ff02::1]", "multicast"),
        ("[ff0e::1]", "multicast"),  # "global" to ipaddress
        ("240.0.0.1", "reserved"),
        ("[::ffff:127.0.0.1]", "IPv4-mapped"),
        ("[::ffff:169.254.169.254]", "IPv4-mapped"),
        ("[2002:7f00:1::]", "6to4 form (127.0.0.1)"),
        ("[2002:a9fe:a9fe::1]", "6to4 form (169.254.169.254)"),
        ("[2001:0:4136:e378:8000:63bf:80ff:fffe]", "Teredo form (127.0.0.1)"),
        ("[64:ff9b::7f00:1]", "NAT64 form (127.0.0.1)"),
        ("[64:ff9b::a00:1]", "NAT64 form (10.0.0.1)"),
        ("[fc00::1]", "private"),
        ("[fd12:3456::1]", "private"),
        ("[fe80::1]", "link-local"),
        ("[::7f00:1]", "reserved"),  # IPv4-compatible, deprecated
    ],
)
def test_the_policy_refuses_every_non_public_range(host: str, why: str) -> None:
    policy, asked = resolving_to(PUBLIC)  # a literal never reaches the resolver
    with pytest.raises(AddressRefused, match="--allow-private") as refused:
        policy.check_url(f"http://{host}:8080/admin")
    assert why in str(refused.value) and asked == []


def test_python_flags_alone_miss_what_the_policy_catches() -> None:
    """The reason for the unwrapping: ipaddress calls these public or not private."""
    import ipaddress

    assert not ipaddress.ip_address("100.100.100.200").is_private
    assert ipaddress.ip_address("2002:7f00:1::").is_global
    assert ipaddress.ip_address("ff0e::1").is_global
    for address in ("100.100.100.200", "2002:7f00:1::", "ff0e::1", "64:ff9b::7f00:1"):
        assert refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize(
    "address", [PUBLIC, "8.8.8.8", "2606:4700::1111", "2002:5db8:d822::", "64:ff9b::5db8:d822"]
)
def test_a_public_address_passes_without_a_connection(address: str) -> None:
    policy, asked = resolving_to(address)
    checked = policy.check_url("https://docs.example.com/handbook")
    assert checked.address == address and checked.host == "docs.example.com"
    assert checked.port == 443 and asked == ["docs.example.com"]


def test_a_name_is_judged_by_every_address_it_resolves_to() -> None:
    policy, _ = resolving_to(PUBLIC, "10.0.0.7")
    with pytest.raises(AddressRefused, match=r"docs\.example\.com \(10\.0\.0\.7\).*private"):
        policy.check_url("http://docs.example.com/")


def test_localhost_is_refused_through_the_system_resolver() -> None:
    assert set(system_resolver("localhost", 80)) <= {"127.0.0.1", "::1"}
    with pytest.raises(AddressRefused, match="loopback"):
        AddressPolicy().check_url("http://localhost:9/")


def test_the_opt_in_lifts_the_rule_and_only_http_is_fetched() -> None:
    allowed = AddressPolicy(allow_private=True)
    assert allowed.check_url("http://127.0.0.1:9/").address == "127.0.0.1"
    assert allowed.check_url("http://2130706433/").address == "127.0.0.1"
    for url in ("file:///etc/passwd", "gopher://127.0.0.1/", "ftp://example.com/x"):
        with pytest.raises(AddressRefused, match="only http and https"):
            allowed.check_url(url)


def test_numeric_hosts_are_read_as_libc_reads_them() -> None:
    assert str(literal_address("2130706433")) == "127.0.0.1"
    assert str(literal_address("0x7f000001")) == "127.0.0.1"
    assert literal_address("docs.example.com") is None
    assert literal_address("1.example") is None


def test_another_port_or_host_is_another_site() -> None:
    assert same_site("http://a.example/x", "http://A.example:80/y")
    assert same_site("http://a.example/x", "https://a.example/y")  # the upgrade to https
    assert not same_site("http://127.0.0.1:8000/", "http://127.0.0.1:8001/")
    assert not same_site("https://a.example/", "http://a.example/")  # no downgrade
    assert not same_site("http://a.example/", "http://b.example/")


def test_a_refused_request_never_reaches_the_network() -> None:
    policy, _ = resolving_to("169.254.169.254")
    with httpx.Client(transport=GuardedTransport(policy, NoConnection())) as client:
        with pytest.raises(FetchRefused, match=r"link-local.*--allow-private"):
            client.get("http://metadata.example/latest/meta-data/")
        with pytest.raises(FetchRefused, match="loopback"):
            client.get("http://[::ffff:127.0.0.1]/")


def test_an_allowed_request_goes_to_the_checked_address_under_its_own_name() -> None:
    """DNS rebinding: the connection goes to the address that was checked, and the
    server and the TLS check still see the host name."""
    policy, asked = resolving_to(PUBLIC)
    inner = Recorder()
    with httpx.Client(transport=GuardedTransport(policy, inner)) as client:
        assert client.get("https://docs.example.com:8443/a?b=1").text == "ok"
    sent = inner.sent[0]
    assert str(sent.url) == f"https://{PUBLIC}:8443/a?b=1"
    assert sent.headers["Host"] == "docs.example.com:8443"
    assert sent.extensions["sni_hostname"] == "docs.example.com"
    assert asked == ["docs.example.com"]


def test_every_redirect_hop_is_checked_again() -> None:
    """A public page redirecting to a metadata address: the second hop is refused before
    any connection to it (httpx sends each hop through the transport)."""
    answers = {"docs.example.com": [PUBLIC], "evil.example": ["169.254.169.254"]}
    policy = AddressPolicy(resolver=lambda host, port: answers[host])

    class Redirecting(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            assert str(request.url).startswith(f"http://{PUBLIC}/"), request.url
            return httpx.Response(302, headers={"Location": "http://evil.example/secret"})

    transport = GuardedTransport(policy, Redirecting())
    with (
        httpx.Client(transport=transport, follow_redirects=True) as client,
        pytest.raises(FetchRefused, match=r"evil\.example.*link-local"),
    ):
        client.get("http://docs.example.com/start")


async def test_summarize_url_reports_a_redirect_to_another_site_without_fetching_it() -> None:
    """Two loopback servers on two ports are two sites: the page redirecting to the other
    is reported to the model, and the other server sees no request."""
    inside = FakeSite().start()
    outside = FakeSite().start()
    try:
        inside.set_page("/admin.html", html_page("Admin", "The admin token is ZEPHYR-9."))
        outside.redirects["/go"] = inside.url + "/admin.html"
        async with httpx.AsyncClient() as client:
            with pytest.raises(ToolError, match="another site; not followed"):
                await summarize_url(outside.url + "/go", FetchLimits(allow_private=True), client)
    finally:
        inside.stop()
        outside.stop()
    assert outside.requests["/go"] == 1 and sum(inside.requests.values()) == 0
