"""The HTTP service's conversations over real HTTP, on the service test_http_api.py
describes: a follow-up continues one, another user's is 404, renaming, deleting (its
memory too) and paging, and they survive a restart."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.http.context import conversation_thread_id
from agent.memory.backends import open_checkpointer
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.support.agent_support import BACKUPS
from tests.support.http_support import http_service, http_settings

pytestmark = pytest.mark.slow


async def test_a_follow_up_continues_the_conversation(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with (
        http_service(sample_kb, http_settings(tmp_path)) as service,
        service.client(service.add_user("minji")) as client,
    ):
        first = (await client.post("/api/chat", json={"query": BACKUPS})).json()
        conversation = first["conversation_id"]
        second = (
            await client.post(
                "/api/chat",
                json={
                    "query": "When is the on-call handover?",
                    "conversation_id": conversation,
                },
            )
        ).json()
        assert second["conversation_id"] == conversation
        detail = (await client.get(f"/api/conversations/{conversation}")).json()
        assert [m["role"] for m in detail["messages"]] == ["user", "assistant"] * 2
        listed = (await client.get("/api/conversations")).json()
        assert len(listed["items"]) == 1


async def test_another_users_conversation_is_404(sample_kb: KnowledgeBase, tmp_path: Path) -> None:
    async with (
        http_service(sample_kb, http_settings(tmp_path)) as service,
        service.client(service.add_user("minji")) as minji,
        service.client(service.add_user("jisoo")) as jisoo,
    ):
        answer = (await minji.post("/api/chat", json={"query": BACKUPS})).json()
        theirs = f"/api/conversations/{answer['conversation_id']}"
        assert (await jisoo.get(theirs)).status_code == 404
        assert (await jisoo.patch(theirs, json={"title": "mine"})).status_code == 404
        assert (await jisoo.delete(theirs)).status_code == 404
        follow = await jisoo.post(
            "/api/chat", json={"query": "hi", "conversation_id": answer["conversation_id"]}
        )
        assert follow.status_code == 404
        vote = await jisoo.post(
            "/api/feedback", json={"message_id": answer["message_id"], "rating": "down"}
        )
        assert vote.status_code == 404
        assert (await jisoo.get("/api/conversations")).json()["items"] == []
        # Still there for its owner.
        assert (await minji.get(theirs)).status_code == 200


async def test_rename_delete_and_pages(sample_kb: KnowledgeBase, tmp_path: Path) -> None:
    async with (
        http_service(sample_kb, http_settings(tmp_path)) as service,
        service.client(service.add_user("minji")) as client,
    ):
        ids = []
        for n in range(3):
            body = (await client.post("/api/chat", json={"query": f"안녕 {n}"})).json()
            ids.append(body["conversation_id"])
        page = (await client.get("/api/conversations", params={"limit": 2})).json()
        assert [c["id"] for c in page["items"]] == [ids[2], ids[1]]  # newest first
        assert page["next_offset"] == 2
        rest = (await client.get("/api/conversations", params={"limit": 2, "offset": 2})).json()
        assert [c["id"] for c in rest["items"]] == [ids[0]] and rest["next_offset"] is None
        renamed = await client.patch(f"/api/conversations/{ids[0]}", json={"title": "백업 질문"})
        assert renamed.status_code == 200 and renamed.json()["title"] == "백업 질문"
        blank = await client.patch(f"/api/conversations/{ids[0]}", json={"title": ""})
        assert blank.status_code == 422
        assert (await client.delete(f"/api/conversations/{ids[1]}")).status_code == 204
        assert (await client.get(f"/api/conversations/{ids[1]}")).status_code == 404
        left = (await client.get("/api/conversations")).json()["items"]
        assert {c["id"] for c in left} == {ids[0], ids[2]}


async def test_deleting_a_conversation_deletes_its_memory_too(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    settings = http_settings(tmp_path)
    async with (
        http_service(sample_kb, settings) as service,
        service.client(service.add_user("minji")) as client,
    ):
        body = (await client.post("/api/chat", json={"query": BACKUPS})).json()
        conversation = body["conversation_id"]
        thread = conversation_thread_id(conversation)
        async with open_checkpointer(None, settings.data_dir / "memory.sqlite") as saver:
            kept = await saver.aget_tuple({"configurable": {"thread_id": thread}})
        assert kept is not None  # the turn was remembered under the conversation's thread
        assert (await client.delete(f"/api/conversations/{conversation}")).status_code == 204
        async with open_checkpointer(None, settings.data_dir / "memory.sqlite") as saver:
            assert await saver.aget_tuple({"configurable": {"thread_id": thread}}) is None


async def test_conversations_survive_a_restart(sample_kb: KnowledgeBase, tmp_path: Path) -> None:
    settings = http_settings(tmp_path, jwt_secret=None)  # the generated secret must persist too
    async with http_service(sample_kb, settings) as service:
        token = service.add_user("minji")
        async with service.client(token) as client:
            answer = (await client.post("/api/chat", json={"query": BACKUPS})).json()
    async with http_service(sample_kb, settings) as service, service.client(token) as client:
        detail = await client.get(f"/api/conversations/{answer['conversation_id']}")
        assert detail.status_code == 200
        assert detail.json()["messages"][1]["content"] == answer["response"]
