"""Password sign-in over real HTTP: a password change revokes earlier tokens, and failed
sign-ins are limited per account and per client address (shared through a real Redis)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import jwt
import pytest

from agent.retrieval.knowledge_base import KnowledgeBase
from tests.support.http_support import Service, http_service, http_settings

pytestmark = pytest.mark.slow

PASSWORD = "비밀번호-123"


async def sign_in(service: Service, name: str, password: str) -> tuple[int, dict[str, str], str]:
    """(status, headers, the token or the refusal's detail)."""
    async with service.client() as client:
        response = await client.post(
            "/api/auth/token", data={"username": name, "password": password}
        )
    body = response.json()
    return response.status_code, dict(response.headers), body.get("access_token") or body["detail"]


async def conversations_status(service: Service, token: str) -> tuple[int, str]:
    async with service.client(token) as client:
        response = await client.get("/api/conversations")
    return response.status_code, response.text


async def test_a_password_change_revokes_the_earlier_tokens(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    """Before, a token issued before the change kept working for its whole 30 days."""
    async with http_service(sample_kb, http_settings(tmp_path)) as service:
        service.add_user("minji", password=PASSWORD)
        other = service.add_user("jisoo")
        status, _, old = await sign_in(service, "minji", PASSWORD)
        assert status == 200
        # A token from before generations existed (no 'gen' claim) counts as generation 0.
        legacy = jwt.encode(
            {"sub": "minji", "iat": 1, "exp": 2**40, "iss": "teamrag"},
            service.ctx.tokens.secret,
        )
        for token in (old, legacy):
            assert (await conversations_status(service, token))[0] == 200

        service.ctx.accounts.set_password("minji", "새 비밀번호-456")
        for token in (old, legacy):
            status, body = await conversations_status(service, token)
            assert status == 401 and "password of 'minji' changed" in body, body
        assert (await conversations_status(service, other))[0] == 200  # others keep theirs

        assert (await sign_in(service, "minji", PASSWORD))[0] == 401
        status, _, new = await sign_in(service, "minji", "새 비밀번호-456")
        assert status == 200
        assert (await conversations_status(service, new))[0] == 200


async def test_wrong_passwords_lock_the_account_and_not_another(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    """Before, 242 wrong passwords in 57 s got 242 401s: no 429, no lockout."""
    settings = http_settings(
        tmp_path, signin_failures_per_account=3, signin_failures_per_address=100
    )
    async with http_service(sample_kb, settings) as service:
        service.add_user("minji", password=PASSWORD)
        service.add_user("jisoo", password=PASSWORD)
        for _ in range(3):
            assert (await sign_in(service, "minji", "wrong"))[0] == 401
        # Locked: even the right password waits, and is not checked at all.
        status, headers, detail = await sign_in(service, "minji", PASSWORD)
        assert status == 429, detail
        assert headers["retry-after"] == "30" and "for this account" in detail
        assert (await sign_in(service, "jisoo", PASSWORD))[0] == 200  # another account


async def test_wrong_passwords_from_one_address_lock_the_address(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    settings = http_settings(
        tmp_path, signin_failures_per_account=100, signin_failures_per_address=4
    )
    async with http_service(sample_kb, settings) as service:
        service.add_user("minji", password=PASSWORD)
        for name in ("a", "b", "c", "minji"):  # a different name each time
            assert (await sign_in(service, name, "wrong"))[0] == 401
        status, headers, detail = await sign_in(service, "minji", PASSWORD)
        assert status == 429 and "from this address" in detail
        assert int(headers["retry-after"]) == 30


async def test_password_checks_never_wait_behind_or_hold_up_other_requests(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    """Before, each check ran argon2 on the database's 4 threads: 24 wrong passwords at
    once queued an authenticated GET /api/conversations behind nearly all of them (8-9 s
    in the issue). Now they run on one password thread, a few more wait, the rest are
    refused at once, and the GET finishes while the checks are still going."""
    settings = http_settings(
        tmp_path, signin_failures_per_account=0, signin_failures_per_address=0, signin_threads=1
    )
    async with http_service(sample_kb, settings) as service:
        token = service.add_user("minji", password=PASSWORD)
        statuses: list[int] = []

        async def wrong() -> None:
            statuses.append((await sign_in(service, "minji", "wrong"))[0])

        flood = [asyncio.create_task(wrong()) for _ in range(24)]
        while not statuses:  # the server has the flood in hand
            await asyncio.wait(flood, return_when=asyncio.FIRST_COMPLETED)
        status, _ = await conversations_status(service, token)
        checked_before = statuses.count(401)
        await asyncio.gather(*flood)
        assert status == 200
        assert checked_before <= 12, (checked_before, statuses)
        assert 429 in statuses  # past the waiting room: refused, not queued


async def test_two_workers_share_the_limit_through_redis_and_the_lock_grows(
    sample_kb: KnowledgeBase, tmp_path: Path, redis_url: str
) -> None:
    """Two services on one Redis (as two `teamrag serve` workers): failures on either count
    towards one lock, which both enforce, and a failure after the lock doubles it."""
    settings = http_settings(
        tmp_path,
        REDIS_URL=redis_url,
        signin_failures_per_account=3,
        signin_failures_per_address=100,
        signin_lockout_s=1.0,
    )
    async with (
        http_service(sample_kb, settings) as first,
        http_service(sample_kb, settings) as second,
    ):
        first.add_user("minji", password=PASSWORD)
        for service in (first, second, first):
            assert (await sign_in(service, "minji", "wrong"))[0] == 401
        status, headers, _ = await sign_in(second, "minji", PASSWORD)
        assert status == 429 and headers["retry-after"] == "1"

        await asyncio.sleep(1.05)  # the first lock (1 s) is over
        assert (await sign_in(second, "minji", "wrong"))[0] == 401  # checked again, wrong
        status, headers, _ = await sign_in(first, "minji", PASSWORD)
        assert status == 429 and headers["retry-after"] == "2"  # doubled
