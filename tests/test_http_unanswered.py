"""Coverage over the real HTTP API: every answer says whether the documents cover it
(JSON and the SSE final), and ``/api/admin/unanswered`` lists the questions they did not
cover and the ones voted down, grouped by topic, with when and which conversation.

The agent is the real one on the sample documents, embedded and extractive (no key).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from agent.retrieval.knowledge_base import KnowledgeBase
from tests.support.http_support import Service, http_service, http_settings, parse_sse

pytestmark = pytest.mark.slow

COVERED = "Postgres 백업은 며칠 동안 보관되나요?"
NOT_COVERED = "How do I book a meeting room?"
ALSO_NOT = "What is the dress code?"


def most_cited(answer: dict[str, Any]) -> str:
    titles: list[str] = [s["title"] or s["source"] for s in answer["sources"]]
    counts = Counter(titles)
    return max(counts, key=lambda t: (counts[t], -titles.index(t)))


@asynccontextmanager
async def boss_and_minji(
    kb: KnowledgeBase, folder: Path
) -> AsyncIterator[tuple[Service, str, str]]:
    """The service with an admin, boss, and a person, minji: it and their tokens."""
    async with http_service(kb, http_settings(folder)) as service:
        yield service, service.add_user("boss", is_admin=True), service.add_user("minji")


async def test_a_not_covered_question_is_listed_by_topic_with_the_voted_down_ones(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with boss_and_minji(sample_kb, tmp_path) as (service, admin_token, minji):
        async with service.client(minji) as client:
            missing = (await client.post("/api/chat", json={"query": NOT_COVERED})).json()
            assert missing["covered"] is False and missing["sources"], missing
            streamed = await client.post("/api/chat", json={"query": ALSO_NOT, "stream": True})
            final = parse_sse(streamed.text)[-1][1]
            assert final["covered"] is False
            found = (await client.post("/api/chat", json={"query": COVERED})).json()
            assert found["covered"] is True
            hello = (await client.post("/api/chat", json={"query": "hello"})).json()
            assert hello["intent"] == "smalltalk" and hello["covered"] is None
            # Covered, but the asker found it unhelpful: listed too.
            vote = {"message_id": found["message_id"], "rating": "down", "comment": "오래됨"}
            assert (await client.post("/api/feedback", json=vote)).status_code == 200
            await asyncio.wait_for(service.ctx.services.run.drain(), 10)  # type: ignore[attr-defined]
            assert (await client.get("/api/admin/unanswered")).status_code == 403
        async with service.client(admin_token) as admin:
            listed = (await admin.get("/api/admin/unanswered")).json()
    items = {item["question"]: item for item in listed["items"]}
    assert set(items) == {NOT_COVERED, ALSO_NOT, COVERED}
    assert items[NOT_COVERED]["reasons"] == ["not_covered"]
    assert items[COVERED]["reasons"] == ["thumbs_down"] and items[COVERED]["comment"] == "오래됨"
    for question, answer in ((NOT_COVERED, missing), (ALSO_NOT, final), (COVERED, found)):
        item = items[question]
        assert item["conversation_id"] == answer["conversation_id"]
        assert item["user"] == "http:http:minji" and item["platform"] == "http"
        assert item["asked_at"] > 0
        # Grouped under the document most of the passages shown came from.
        [group] = [g for g in listed["groups"] if question in {i["question"] for i in g["items"]}]
        assert (group["topic"], group["kind"]) == (most_cited(answer), "document")
        assert item["topic"] == group["topic"]
        assert group["count"] == len(group["items"])


async def test_an_admin_reads_the_conversation_a_gap_came_from_and_no_other(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with boss_and_minji(sample_kb, tmp_path) as (service, admin_token, minji):
        async with service.client(minji) as client:
            missing = (await client.post("/api/chat", json={"query": NOT_COVERED})).json()
            found = (await client.post("/api/chat", json={"query": COVERED})).json()
            assert missing["covered"] is False and found["covered"] is True
            await asyncio.wait_for(service.ctx.services.run.drain(), 10)  # type: ignore[attr-defined]
            gap = f"/api/admin/conversations/{missing['conversation_id']}"
            refused = await client.get(gap)
            assert refused.status_code == 403 and "not an admin" in refused.json()["detail"]
        async with service.client(admin_token) as admin:
            read = await admin.get(gap)
            assert read.status_code == 200, read.text
            # Covered and not voted down: no gap, so still minji's alone.
            covered = f"/api/admin/conversations/{found['conversation_id']}"
            private = await admin.get(covered)
            unknown = await admin.get("/api/admin/conversations/nope")
        async with service.client(minji) as client:
            vote = {"message_id": found["message_id"], "rating": "down", "comment": "오래됨"}
            assert (await client.post("/api/feedback", json=vote)).status_code == 200
        async with service.client(admin_token) as admin:
            voted_down = await admin.get(covered)  # now a gap: readable
    body = read.json()
    assert body["id"] == missing["conversation_id"] and body["owner"] == "minji"
    assert [m["role"] for m in body["messages"]] == ["user", "assistant"]
    assert body["messages"][0]["content"] == NOT_COVERED
    assert body["messages"][1]["content"] == missing["response"]
    assert private.status_code == 404 and "no knowledge gap" in private.json()["detail"]
    assert unknown.status_code == 404
    assert voted_down.status_code == 200 and voted_down.json()["messages"][0]["content"] == COVERED
