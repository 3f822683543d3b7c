"""The HTTP service's /api/chat over real HTTP (uvicorn on a free port): a cited answer as
JSON and as Server-Sent Events, input refused with the reason, a request's own feature
flags, the rate limit, feedback and usage, the ops endpoints, and a failing database.
Conversations are in test_http_conversations.py, accounts and tokens in
test_http_auth.py.

The agent is the real one on the sample documents, embedded and extractive (no key),
composed exactly as `teamrag serve` composes it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest

from agent.retrieval.knowledge_base import KnowledgeBase
from tests.conftest import SAMPLES
from tests.support.agent_support import BACKUPS
from tests.support.http_support import http_service, http_settings, parse_sse

pytestmark = pytest.mark.slow


async def test_a_question_gets_a_cited_answer_in_a_new_conversation(
    sample_kb: KnowledgeBase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(SAMPLES.parent.parent)  # the server runs in the repository
    async with http_service(sample_kb, http_settings(tmp_path)) as service:
        token = service.add_user("minji")
        async with service.client(token) as client:
            answer = (await client.post("/api/chat", json={"query": BACKUPS})).json()
            assert answer["query"] == BACKUPS
            assert answer["sources"] and answer["sources"][0]["number"] == 1
            assert {"title", "location", "link"} <= set(answer["sources"][0])
            # As the team named it, not where the server keeps its files.
            assert answer["sources"][0]["source"] == "samples/kb/ops-handbook.pdf"
            assert answer["intent"] == "knowledge"
            assert answer["model"] == "(extractive)"
            assert answer["is_blocked"] is False and answer["cached"] is False
            assert answer["complexity"] in ("simple", "moderate", "complex")
            assert 0 < answer["confidence"] <= 1
            assert answer["usage"]["total_tokens"] == 0
            assert answer["timings"]["total"] > 0

            listed = (await client.get("/api/conversations")).json()
            assert [c["id"] for c in listed["items"]] == [answer["conversation_id"]]
            assert listed["items"][0]["title"] == BACKUPS[:30]
            assert listed["next_offset"] is None

            detail = (await client.get(f"/api/conversations/{answer['conversation_id']}")).json()
            assert [m["role"] for m in detail["messages"]] == ["user", "assistant"]
            assert detail["messages"][0]["content"] == BACKUPS
            assert detail["messages"][1]["id"] == answer["message_id"]
            assert detail["messages"][1]["content"] == answer["response"]
            assert detail["messages"][1]["sources"] == answer["sources"]


async def test_bad_input_is_422_with_the_reason(sample_kb: KnowledgeBase, tmp_path: Path) -> None:
    settings = http_settings(tmp_path, max_input_chars=200)
    async with (
        http_service(sample_kb, settings) as service,
        service.client(service.add_user("minji")) as client,
    ):
        empty = await client.post("/api/chat", json={"query": "   "})
        assert empty.status_code == 422 and "empty" in empty.json()["detail"]
        long = await client.post("/api/chat", json={"query": "가" * 201})
        assert long.status_code == 422
        assert "201 characters" in long.json()["detail"]
        assert "TEAMRAG_MAX_INPUT_CHARS" in long.json()["detail"]
        missing = await client.post("/api/chat", json={"question": "hi"})
        assert missing.status_code == 422 and "query" in missing.json()["detail"]
        unknown = await client.post("/api/chat", json={"query": "hi", "conversation_id": "nope"})
        assert unknown.status_code == 404
        # Nothing was created by the refused questions.
        assert (await client.get("/api/conversations")).json()["items"] == []


async def test_a_request_sets_its_own_feature_flags_and_a_wrong_one_is_422(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with (
        http_service(sample_kb, http_settings(tmp_path)) as service,
        service.client(service.add_user("minji")) as client,
    ):
        flags = {"self_refine": False, "hallucination_policy": "warn"}
        body = (await client.post("/api/chat", json={"query": BACKUPS, "features": flags})).json()
        assert body["features"]["self_refine"] is False
        assert body["features"]["hallucination_policy"] == "warn"
        assert body["features"]["rerank"] is True  # the rest keep the server's settings
        unknown = await client.post(
            "/api/chat", json={"query": BACKUPS, "features": {"self_refin": False}}
        )
        assert unknown.status_code == 422 and "self_refin" in unknown.json()["detail"]
        wrong = await client.post(
            "/api/chat", json={"query": BACKUPS, "features": {"hallucination_policy": "maybe"}}
        )
        assert wrong.status_code == 422 and "hallucination_policy" in wrong.json()["detail"]


async def test_channel_rules_leave_the_http_turns_flags_to_the_server_and_the_request(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    # The HTTP API has no channels (docs/http.md): neither [defaults] nor a section named
    # after its internal channel may switch off a stage of its answers.
    rules = "[defaults.features]\nrerank = false\n[channels.api.features]\nself_refine = false\n"
    async with (
        http_service(sample_kb, http_settings(tmp_path, channels=rules)) as service,
        service.client(service.add_user("minji")) as client,
    ):
        body = (await client.post("/api/chat", json={"query": BACKUPS})).json()
    assert body["features"]["rerank"] is True and body["features"]["self_refine"] is True


async def test_over_the_limit_is_429_with_retry_after(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    settings = http_settings(tmp_path, rate_limit_per_minute=2)
    async with http_service(sample_kb, settings) as service:
        async with service.client(service.add_user("minji")) as client:
            for _ in range(2):
                assert (await client.post("/api/chat", json={"query": "안녕"})).status_code == 200
            refused = await client.post("/api/chat", json={"query": "안녕하세요"})
            assert refused.status_code == 429
            assert 1 <= int(refused.headers["Retry-After"]) <= 60
            assert "초" in refused.json()["detail"]  # said in the asker's language
        # The limit is per user: another account still asks.
        async with service.client(service.add_user("jisoo")) as client:
            assert (await client.post("/api/chat", json={"query": "hello"})).status_code == 200


async def test_a_streamed_turn_sends_progress_then_final_in_order(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with (
        http_service(sample_kb, http_settings(tmp_path)) as service,
        service.client(service.add_user("minji")) as client,
    ):
        response = await client.post("/api/chat", json={"query": BACKUPS, "stream": True})
        assert response.headers["content-type"].startswith("text/event-stream")
        events = parse_sse(response.text)
        names = [name for name, _ in events]
        assert names[0] == "progress" and names[-1] == "final"
        assert names.count("final") == 1
        assert set(names) <= {"progress", "token", "final"}
        assert all({"stage", "text"} <= set(d) for n, d in events if n == "progress")
        final = events[-1][1]
        assert final["sources"] and final["message_id"]
        # Accept: text/event-stream asks for the same stream.
        again = await client.post(
            "/api/chat",
            json={"query": "hello", "conversation_id": final["conversation_id"]},
            headers={"Accept": "text/event-stream"},
        )
        assert parse_sse(again.text)[-1][0] == "final"


async def test_a_client_that_leaves_mid_stream_does_not_lose_the_turn(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with (
        http_service(sample_kb, http_settings(tmp_path)) as service,
        service.client(service.add_user("minji")) as client,
    ):
        async with client.stream(
            "POST", "/api/chat", json={"query": BACKUPS, "stream": True}
        ) as response:
            async for line in response.aiter_lines():
                if line.startswith("event: progress"):
                    break  # the tab is closed after the first step
        await service.app.state.turns.drain()
        listed = (await client.get("/api/conversations")).json()["items"]
        detail = (await client.get(f"/api/conversations/{listed[0]['id']}")).json()
        assert [m["role"] for m in detail["messages"]] == ["user", "assistant"]
        assert detail["messages"][1]["sources"]
        # And the service still answers.
        assert (await client.post("/api/chat", json={"query": "hello"})).status_code == 200


async def test_feedback_and_usage(sample_kb: KnowledgeBase, tmp_path: Path) -> None:
    async with http_service(sample_kb, http_settings(tmp_path)) as service:
        admin_token = service.add_user("boss", is_admin=True)
        async with service.client(service.add_user("minji")) as client:
            answer = (await client.post("/api/chat", json={"query": BACKUPS})).json()
            vote = await client.post(
                "/api/feedback",
                json={
                    "message_id": answer["message_id"],
                    "rating": "down",
                    "comment": "출처가 오래됨",
                },
            )
            assert vote.status_code == 200
            bad = await client.post("/api/feedback", json={"message_id": "x", "rating": "meh"})
            assert bad.status_code == 422 and "rating" in bad.json()["detail"]
            entries = service.ctx.services.feedback.entries(None)
            assert [(e.rating, e.voter, e.comment) for e in entries] == [
                ("down", "minji", "출처가 오래됨")
            ]
            assert entries[0].answer.question == BACKUPS
            await asyncio.wait_for(service.ctx.services.run.drain(), 10)  # type: ignore[attr-defined]
            mine = (await client.get("/api/usage")).json()
            assert mine["requests"] == 1
            assert mine["rows"][0]["user"] == "http:http:minji"
            assert (await client.get("/api/admin/usage")).status_code == 403
        async with service.client(admin_token) as admin:
            everyone = (await admin.get("/api/admin/usage")).json()
            assert [u["user"] for u in everyone["users"]] == ["http:http:minji"]
            feedback = (await admin.get("/api/admin/feedback")).json()["items"]
            assert feedback[0]["comment"] == "출처가 오래됨"
            docs = (await admin.get("/api/admin/documents")).json()
            assert docs["scopes"] == {"public": len(docs["documents"])}
            assert any(d["title"] for d in docs["documents"])


async def test_ops_endpoints_and_docs(sample_kb: KnowledgeBase, tmp_path: Path) -> None:
    async with (
        http_service(sample_kb, http_settings(tmp_path)) as service,
        httpx.AsyncClient(base_url=service.url) as client,
    ):
        assert (await client.get("/healthz")).text == "ok"  # /readyz, /metrics: the ops port
        schema = (await client.get("/openapi.json")).json()
        assert {"/api/chat", "/api/conversations", "/v1/chat/completions"} <= set(schema["paths"])
        assert (await client.get("/docs")).status_code == 200


async def test_a_database_that_fails_ends_the_turn_with_the_reason(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    import sqlite3

    settings = http_settings(tmp_path)
    async with http_service(sample_kb, settings) as service:
        token = service.add_user("minji")
        with sqlite3.connect(settings.data_dir / "http.sqlite") as db:
            db.execute("DROP TABLE teamrag_messages")  # the disk the messages lived on is gone
        async with service.client(token) as client:
            response = await client.post("/api/chat", json={"query": BACKUPS, "stream": True})
            assert response.status_code == 200
            final = parse_sse(response.text)[-1]
            assert final[0] == "final"
            assert final[1]["intent"] == "error"
            assert "could not be saved" in final[1]["response"]
            # The service is still up for what does not need the lost table.
            assert (await client.get("/api/conversations")).status_code == 200
