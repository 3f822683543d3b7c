"""LLM turns over HTTP, and the OpenAI-compatible /v1 driven by the official ``openai``
client: the agent on the local fake OpenAI server behind the real service."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.support.agent_support import (
    FOLLOW_UP_ANALYSES,
    FOLLOW_UP_ANSWERS,
    analysis,
    request_text,
    script_answer,
)
from tests.support.http_support import Service, http_service, http_settings

pytestmark = pytest.mark.slow


def client_for(service: Service, token: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=f"{service.url}/v1", api_key=token, max_retries=0)


def analyses_seen(fake_llm: FakeOpenAI) -> list[str]:
    return [request_text(c.body) for c in fake_llm.calls if c.task == "Analysis"]


async def test_an_llm_turn_says_which_model_and_continues_its_thread(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_answer(fake_llm, *FOLLOW_UP_ANSWERS, analyses=FOLLOW_UP_ANALYSES)
    settings = http_settings(tmp_path, llm=fake_llm)
    async with (
        http_service(sample_kb, settings) as service,
        service.client(service.add_user("minji")) as client,
    ):
        first = (
            await client.post("/api/chat", json={"query": "How long are Postgres backups kept?"})
        ).json()
        assert first["response"] == FOLLOW_UP_ANSWERS[0]
        assert first["model"] == "chat-model"
        assert first["usage"]["completion_tokens"] > 0
        assert (first["intent"], first["complexity"], first["confidence"]) == (
            "knowledge",
            "moderate",
            0.95,
        )
        second = (
            await client.post(
                "/api/chat",
                json={
                    "query": "and where is the handover?",
                    "conversation_id": first["conversation_id"],
                },
            )
        ).json()
    assert "#oncall-handover" in second["response"]
    # The same LangGraph thread as a Slack thread: the history was in the router's prompt.
    assert "How long are Postgres backups kept?" in analyses_seen(fake_llm)[1]


async def test_a_failing_llm_still_ends_in_an_answer(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis())
    fake_llm.reply("text", Reply(status=500))
    async with (
        http_service(sample_kb, http_settings(tmp_path, llm=fake_llm)) as service,
        service.client(service.add_user("minji")) as client,
    ):
        response = await client.post(
            "/api/chat", json={"query": "How long are Postgres backups kept?", "stream": True}
        )
        assert response.status_code == 200
        final = response.text.rsplit("event: final", 1)[1]
        assert '"response": ""' not in final
        assert "notes" in final


async def test_the_official_openai_client_lists_models_and_chats_with_history(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_answer(fake_llm, *FOLLOW_UP_ANSWERS, analyses=FOLLOW_UP_ANALYSES)
    async with http_service(sample_kb, http_settings(tmp_path, llm=fake_llm)) as service:
        token = service.add_user("minji")
        client = client_for(service, token)
        models = await client.models.list()
        assert [m.id for m in models.data] == ["teamrag"]
        history: list[dict[str, str]] = [
            {"role": "system", "content": "You are helpful."},  # front-ends add one; ignored
            {"role": "user", "content": "How long are Postgres backups kept?"},
        ]
        first = await client.chat.completions.create(model="teamrag", messages=history)  # type: ignore[arg-type]
        text = first.choices[0].message.content or ""
        assert text.startswith(FOLLOW_UP_ANSWERS[0])
        assert "\n\nSources:\n[1] " in text
        assert first.usage is not None and first.usage.completion_tokens > 0
        history += [
            {"role": "assistant", "content": text},
            {"role": "user", "content": "and where is the handover?"},
        ]
        stream = await client.chat.completions.create(  # type: ignore[call-overload]
            model="teamrag",
            messages=history,
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [chunk async for chunk in stream]
        assert {c.object for c in chunks} == {"chat.completion.chunk"}
        streamed = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert streamed.startswith(FOLLOW_UP_ANSWERS[1]) and "Sources:" in streamed
        assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
        assert chunks[-1].usage is not None and chunks[-1].usage.total_tokens > 0
        await client.close()
        # The history found its conversation: one conversation, both turns in it.
        async with service.client(token) as http:
            listed = (await http.get("/api/conversations")).json()["items"]
            assert len(listed) == 1
            detail = (await http.get(f"/api/conversations/{listed[0]['id']}")).json()
            assert len(detail["messages"]) == 4
    assert "How long are Postgres backups kept?" in analyses_seen(fake_llm)[1]


async def test_openai_errors_come_in_the_openai_shape(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    settings = http_settings(tmp_path, rate_limit_per_minute=1)
    async with http_service(sample_kb, settings) as service:
        bad = client_for(service, "not-a-token")
        with pytest.raises(openai.AuthenticationError, match="malformed"):
            await bad.models.list()
        await bad.close()
        client = client_for(service, service.add_user("minji"))
        hello = [{"role": "user", "content": "안녕하세요"}]
        answer = await client.chat.completions.create(model="teamrag", messages=hello)  # type: ignore[arg-type]
        assert answer.choices[0].message.content
        with pytest.raises(openai.RateLimitError) as limited:
            await client.chat.completions.create(model="teamrag", messages=hello)  # type: ignore[arg-type]
        assert limited.value.response.headers["Retry-After"]
        with pytest.raises(openai.UnprocessableEntityError, match="last message"):
            await client.chat.completions.create(
                model="teamrag",
                messages=[{"role": "assistant", "content": "hi"}],
            )
        await client.close()
