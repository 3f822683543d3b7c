"""Password sign-in over real HTTP: a password change revokes earlier tokens, and failed
sign-ins are limited per account and per client address (shared through a real Redis)."""

from __future__ import annotations

from pathlib import Path

import jwt
import pytest

from agent.retrieval.knowledge_base import KnowledgeBase
from tests.http_support import Service, http_service, http_settings

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
