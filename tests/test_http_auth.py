"""The HTTP service's accounts over real HTTP, on the service test_http_api.py describes:
every auth failure is 401 with the reason, password sign-in gives a working token, and
an account sees only its scopes' documents."""

from __future__ import annotations

from pathlib import Path

import jwt
import pytest

from agent.retrieval.knowledge_base import KnowledgeBase
from tests.conftest import SAMPLES
from tests.support.agent_support import BACKUPS
from tests.support.http_support import http_service, http_settings

pytestmark = pytest.mark.slow


async def test_every_auth_failure_is_401_with_the_reason(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with http_service(sample_kb, http_settings(tmp_path)) as service:
        good = service.add_user("minji")
        service.add_user("gone")
        secret = service.ctx.tokens.secret
        cases = {
            None: "no bearer token",
            "not-a-jwt": "malformed",
            jwt.encode({"sub": "minji", "iat": 1, "exp": 2, "iss": "teamrag"}, secret): "expired",
            service.ctx.tokens.issue("minji").rsplit(".", 1)[0] + ".c2lnbmF0dXJl": "signature",
            jwt.encode(
                {"sub": "minji", "iat": 1, "exp": 2**40, "iss": "teamrag"}, "another-secret-" * 3
            ): "signature",
            service.ctx.tokens.issue("nobody"): "no longer exists",
        }
        for token, reason in cases.items():
            async with service.client(token) as client:
                for method, path in (("POST", "/api/chat"), ("GET", "/api/conversations")):
                    response = await client.request(method, path, json={"query": "hi"})
                    assert response.status_code == 401, (token, path)
                    assert reason in response.json()["detail"], response.json()
                    assert response.headers["WWW-Authenticate"] == "Bearer"
        service.ctx.accounts.set_disabled("gone")
        disabled = service.ctx.tokens.issue("gone")
        async with service.client(disabled) as client:
            response = await client.get("/api/conversations")
            assert response.status_code == 401 and "disabled" in response.json()["detail"]
        async with service.client(good) as client:
            assert (await client.get("/api/conversations")).status_code == 200


async def test_password_sign_in_gives_a_working_token(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with http_service(sample_kb, http_settings(tmp_path)) as service:
        service.add_user("minji", password="비밀번호-123")
        service.add_user("tokenonly")
        async with service.client() as client:
            for name, password in (("minji", "wrong"), ("tokenonly", ""), ("nobody", "x")):
                response = await client.post(
                    "/api/auth/token", data={"username": name, "password": password or "x"}
                )
                assert response.status_code == 401
                assert "wrong name or password" in response.json()["detail"]
                assert "teamrag users password NAME" in response.json()["detail"]
            response = await client.post(
                "/api/auth/token", data={"username": "minji", "password": "비밀번호-123"}
            )
            assert response.status_code == 200
            body = response.json()
            assert body["token_type"] == "bearer"
            # The fix the 401 names: an account added without a password gets one.
            service.ctx.accounts.set_password("tokenonly", "이제-비밀번호")
            later = await client.post(
                "/api/auth/token", data={"username": "tokenonly", "password": "이제-비밀번호"}
            )
            assert later.status_code == 200, later.json()
        async with service.client(body["access_token"]) as client:
            assert (await client.get("/api/conversations")).status_code == 200


async def test_an_account_sees_only_the_documents_of_its_scopes(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    from agent.retrieval.ingest import Ingestor

    Ingestor(kb).run([SAMPLES / "user-guide.ko.md"], scope="ops")
    Ingestor(kb).run([SAMPLES / "glossary.txt"])  # public
    async with http_service(kb, http_settings(tmp_path)) as service:
        outsider = service.add_user("outsider")
        insider = service.add_user("insider", scopes=("ops",))
        seen = {}
        for name, token in (("outsider", outsider), ("insider", insider)):
            async with service.client(token) as client:
                answer = (await client.post("/api/chat", json={"query": BACKUPS})).json()
                seen[name] = {s["source"] for s in answer["sources"]}
        assert not any("user-guide.ko.md" in s for s in seen["outsider"])
        assert any("user-guide.ko.md" in s for s in seen["insider"])
