"""The fake OpenAI chat endpoint, driven by the real ChatOpenAI over HTTP.

The agent tests lean on this fake, so these pin down that langchain-openai really
accepts what it serves: text, SSE streaming, structured output, tool calls, usage,
errors, timeouts, and the timing log behind the round-trip count.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any, Literal

import httpx
import openai
import pytest
from langchain_core.exceptions import ModelTimeoutError
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from pydantic import BaseModel, Field, ValidationError

from tests.fakes.openai_calls import task_of
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.schema_instance import minimal_instance

# langchain-openai keeps one pooled httpx client per (base_url, timeout) for the whole
# process, so every test here must share one event loop or a pooled connection from a
# closed loop breaks the next test.
pytestmark = pytest.mark.asyncio(loop_scope="module")

KOREAN = "커피 머신은 3층 탕비실에 있습니다. 원두는 매주 월요일에 채워집니다."


class Route(BaseModel):
    route: Literal["kb", "web", "chat"]
    reason: str


class Limits(BaseModel):
    top_k: int = Field(ge=3, le=10)
    threshold: float = Field(ge=0.25)


class Plan(BaseModel):
    mode: Literal["answer", "clarify"]
    limits: Limits
    fallback: Limits | None
    queries: list[str]
    urgent: bool


class Node(BaseModel):
    name: str
    child: Node | None
    children: list[Node]


@tool
def search_kb(query: str, k: int = 3) -> str:
    """Search the team knowledge base."""
    return query


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def clean(fake: FakeOpenAI) -> None:
    fake.reset()
    fake.latency_s = 0.0


def chat(fake: FakeOpenAI, **kwargs: Any) -> ChatOpenAI:
    return ChatOpenAI(
        model="fake-chat",
        base_url=fake.base_url,
        api_key="x",
        stream_usage=True,
        max_retries=0,
        **kwargs,
    )


async def test_ainvoke_text_reports_usage(fake: FakeOpenAI) -> None:
    reply = await chat(fake).ainvoke("안녕하세요")
    assert reply.content == "ok"
    assert isinstance(reply, AIMessage) and reply.usage_metadata
    assert reply.usage_metadata["input_tokens"] > 0
    assert reply.usage_metadata["output_tokens"] > 0
    assert fake.calls_by_task() == {"text": 1}
    assert fake.chat_requests[0]["model"] == "fake-chat"


async def test_scripted_usage_is_reported_as_given(fake: FakeOpenAI) -> None:
    fake.reply("text", Reply(content="hi", usage=(120, 7)))
    reply = await chat(fake).ainvoke("q")
    assert isinstance(reply, AIMessage) and reply.usage_metadata
    assert reply.usage_metadata["input_tokens"] == 120
    assert reply.usage_metadata["output_tokens"] == 7
    assert reply.usage_metadata["total_tokens"] == 127


async def test_astream_splits_korean_and_ends_with_usage(fake: FakeOpenAI) -> None:
    fake.reply("text", KOREAN)
    chunks = [chunk async for chunk in chat(fake).astream("커피 머신 어디?")]
    texts = [c.content for c in chunks if c.content]
    assert len(texts) > 3
    assert "".join(str(t) for t in texts) == KOREAN
    # langchain-core closes every stream with an empty chunk_position="last" chunk, so the
    # usage chunk (choices=[]) is the one before it.
    usage_chunk, closing = chunks[-2], chunks[-1]
    assert isinstance(closing, AIMessageChunk) and closing.chunk_position == "last"
    assert isinstance(usage_chunk, AIMessageChunk) and usage_chunk.usage_metadata
    assert not usage_chunk.content
    assert usage_chunk.usage_metadata["output_tokens"] > 0
    merged = chunks[0]
    for chunk in chunks[1:]:
        merged += chunk
    assert isinstance(merged, AIMessageChunk) and merged.usage_metadata
    assert merged.usage_metadata == usage_chunk.usage_metadata
    assert fake.calls[0].stream


async def test_sse_wire_format(fake: FakeOpenAI) -> None:
    fake.reply("text", KOREAN)
    body = {
        "model": "m",
        "stream": True,
        "stream_options": {"include_usage": True},
        "messages": [{"role": "user", "content": "q"}],
    }
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{fake.base_url}/chat/completions", json=body)
    assert response.headers["content-type"].startswith("text/event-stream")
    assert KOREAN.split()[0].encode("utf-8") in response.content
    events = [line.removeprefix("data: ") for line in response.text.split("\n\n") if line]
    assert events[-1] == "[DONE]"
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"


async def test_structured_output_from_a_scripted_dict(fake: FakeOpenAI) -> None:
    fake.reply("Route", {"route": "web", "reason": "최신 뉴스"})
    result = await chat(fake).with_structured_output(Route, method="json_schema").ainvoke("q")
    assert result == Route(route="web", reason="최신 뉴스")
    response_format = fake.chat_requests[0]["response_format"]
    assert response_format["json_schema"]["name"] == "Route"
    assert response_format["json_schema"]["strict"] is True
    assert fake.calls[0].task == "Route"


async def test_structured_output_default_is_valid_for_the_schema(fake: FakeOpenAI) -> None:
    result = await chat(fake).with_structured_output(Plan, method="json_schema").ainvoke("q")
    assert isinstance(result, Plan)
    assert result.mode == "answer"
    assert result.limits.top_k == 3 and result.limits.threshold == 0.25
    assert result.queries == [] and result.urgent is False


async def test_structured_include_raw_reports_usage(fake: FakeOpenAI) -> None:
    fake.reply("Route", Reply(content={"route": "kb", "reason": ""}, usage=(50, 9)))
    model = chat(fake).with_structured_output(Route, method="json_schema", include_raw=True)
    out = await model.ainvoke("q")
    assert isinstance(out, dict)
    assert out["parsed"] == Route(route="kb", reason="")
    assert out["parsing_error"] is None
    raw = out["raw"]
    assert isinstance(raw, AIMessage) and raw.usage_metadata
    assert raw.usage_metadata["input_tokens"] == 50
    assert raw.usage_metadata["output_tokens"] == 9


# The openai client's stream snapshot types `parsed` as None before filling it with the
# model, so langchain's model_dump of each chunk warns; it does not affect the result.
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings")
async def test_structured_astream_include_raw(fake: FakeOpenAI) -> None:
    fake.reply("Route", {"route": "chat", "reason": "인사"})
    model = chat(fake).with_structured_output(Route, method="json_schema", include_raw=True)
    merged: dict[str, Any] = {}
    async for part in model.astream("q"):
        assert isinstance(part, dict)
        merged.update(part)
    assert merged["parsed"] == Route(route="chat", reason="인사")
    assert merged["raw"].usage_metadata["total_tokens"] > 0


async def test_malformed_json_surfaces_as_a_validation_error(fake: FakeOpenAI) -> None:
    # The openai client parses inside the model call, so even include_raw=True raises
    # instead of filling parsing_error.
    fake.reply("Route", Reply(content={"route": "kb", "reason": "x"}, malformed=True))
    model = chat(fake).with_structured_output(Route, method="json_schema", include_raw=True)
    with pytest.raises(ValidationError, match="json_invalid"):
        await model.ainvoke("q")
    plain = chat(fake).with_structured_output(Route, method="json_schema")
    with pytest.raises(ValidationError):
        await plain.ainvoke("q")
    with pytest.raises(ValidationError):
        async for _ in plain.astream("q"):
            pass


async def test_malformed_default_content_is_cut_short(fake: FakeOpenAI) -> None:
    fake.reply("Route", Reply(malformed=True))
    body = {
        "model": "m",
        "messages": [{"role": "user", "content": "q"}],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "Route", "schema": Route.model_json_schema()},
        },
    }
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{fake.base_url}/chat/completions", json=body)
    content = response.json()["choices"][0]["message"]["content"]
    assert content.startswith('{"route": ')
    with pytest.raises(json.JSONDecodeError):
        json.loads(content)


async def test_bind_tools_invoke_returns_tool_calls(fake: FakeOpenAI) -> None:
    fake.reply("tools", Reply(tool_calls=[("search_kb", {"query": "커피 머신", "k": 2})]))
    reply = await chat(fake).bind_tools([search_kb]).ainvoke("커피 머신 어디?")
    assert isinstance(reply, AIMessage)
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [
        ("search_kb", {"query": "커피 머신", "k": 2})
    ]
    assert reply.tool_calls[0]["id"]
    assert reply.response_metadata["finish_reason"] == "tool_calls"
    assert fake.calls[0].task == "tools"


async def test_bind_tools_astream_returns_tool_calls(fake: FakeOpenAI) -> None:
    fake.reply(
        "tools",
        Reply(
            content="찾아볼게요",
            tool_calls=[("search_kb", {"query": "주차 안내"}), ("search_kb", {"query": "parking"})],
        ),
    )
    merged: AIMessageChunk | None = None
    async for chunk in chat(fake).bind_tools([search_kb]).astream("주차?"):
        assert isinstance(chunk, AIMessageChunk)
        merged = chunk if merged is None else merged + chunk
    assert merged is not None
    assert merged.content == "찾아볼게요"
    assert [c["args"] for c in merged.tool_calls] == [{"query": "주차 안내"}, {"query": "parking"}]
    assert len({c["id"] for c in merged.tool_calls}) == 2
    assert merged.usage_metadata and merged.usage_metadata["total_tokens"] > 0


async def test_tools_default_and_tool_results_answer_as_text(fake: FakeOpenAI) -> None:
    model = chat(fake).bind_tools([search_kb])
    assert (await model.ainvoke("hi")).content == "ok"
    fake.reply("tools", Reply(tool_calls=[("search_kb", {"query": "q"})]))
    fake.reply("text", "3층입니다.")
    first = await model.ainvoke("커피?")
    assert isinstance(first, AIMessage)
    call_id = first.tool_calls[0]["id"]
    history = [HumanMessage("커피?"), first, ToolMessage("3층", tool_call_id=call_id)]
    final = await model.ainvoke(history)
    assert final.content == "3층입니다."
    assert [c.task for c in fake.calls] == ["tools", "tools", "text"]


async def test_status_500_raises_internal_server_error(fake: FakeOpenAI) -> None:
    fake.reply("text", Reply(status=500))
    with pytest.raises(openai.InternalServerError, match="injected failure"):
        await chat(fake).ainvoke("q")
    with pytest.raises(openai.InternalServerError):
        async for _ in chat(fake).astream("q"):
            pass
    assert [c.status for c in fake.calls] == [500, 500]


async def test_status_429_raises_rate_limit_error(fake: FakeOpenAI) -> None:
    fake.reply("text", Reply(status=429))
    with pytest.raises(openai.RateLimitError):
        await chat(fake).ainvoke("q")
    assert len(fake.chat_requests) == 1  # max_retries=0: no retry


async def test_delay_past_the_client_timeout_raises(fake: FakeOpenAI) -> None:
    fake.reply("text", Reply(delay=1.0))
    began = time.monotonic()
    with pytest.raises(openai.APITimeoutError) as caught:
        await chat(fake, timeout=0.3).ainvoke("q")
    assert time.monotonic() - began < 0.9
    assert isinstance(caught.value, ModelTimeoutError)


async def test_scripted_list_is_consumed_in_order_then_repeats(fake: FakeOpenAI) -> None:
    fake.reply("text", "one", Reply(content="two"), "three")
    model = chat(fake)
    answers = [(await model.ainvoke("q")).content for _ in range(5)]
    assert answers == ["one", "two", "three", "three", "three"]


async def test_callable_script_sees_the_request(fake: FakeOpenAI) -> None:
    fake.script["text"] = lambda body: Reply(content=body["messages"][-1]["content"].upper())
    assert (await chat(fake).ainvoke("echo")).content == "ECHO"
    fake.script["text"] = Reply(content="fixed")
    assert (await chat(fake).ainvoke("a")).content == "fixed"
    assert (await chat(fake).ainvoke("b")).content == "fixed"


async def test_round_trips_sequential_and_concurrent(fake: FakeOpenAI) -> None:
    fake.latency_s = 0.1
    model = chat(fake)
    await model.ainvoke("first")
    await model.ainvoke("second")
    assert fake.round_trips() == 2
    fake.reset()
    await asyncio.gather(model.ainvoke("a"), model.ainvoke("b"))
    assert fake.round_trips() == 1
    assert fake.calls_by_task() == {"text": 2}
    await model.ainvoke("after")
    assert fake.round_trips() == 2
    assert fake.round_trips(fake.calls[:2]) == 1


async def test_latency_applies_and_overlaps(fake: FakeOpenAI) -> None:
    fake.latency_s = 0.3
    model = chat(fake)
    began = time.monotonic()
    await model.ainvoke("q")
    assert time.monotonic() - began >= 0.3
    began = time.monotonic()
    await asyncio.gather(*(model.ainvoke(str(i)) for i in range(3)))
    assert time.monotonic() - began < 0.8
    fake.reply("text", Reply(delay=0.2))
    began = time.monotonic()
    await model.ainvoke("q")
    assert time.monotonic() - began >= 0.5
    call = fake.calls[-1]
    assert call.end - call.start >= 0.5


async def test_task_of() -> None:
    messages = [{"role": "user", "content": "q"}]
    tools = [{"type": "function", "function": {"name": "t", "parameters": {}}}]
    schema_format = {"type": "json_schema", "json_schema": {"name": "Route", "schema": {}}}
    assert task_of({"messages": messages}) == "text"
    assert task_of({"messages": messages, "tools": tools}) == "tools"
    after_tool = [*messages, {"role": "tool", "content": "r", "tool_call_id": "c"}]
    assert task_of({"messages": after_tool, "tools": tools}) == "text"
    assert task_of({"messages": messages, "response_format": schema_format}) == "Route"
    json_object = {"messages": messages, "response_format": {"type": "json_object"}}
    assert task_of(json_object) == "text"


async def test_minimal_instance_handles_refs_and_recursion() -> None:
    node = Node.model_validate(minimal_instance(Node.model_json_schema()))
    assert node == Node(name="", child=None, children=[])
    plan = Plan.model_validate(minimal_instance(Plan.model_json_schema()))
    assert plan.fallback is not None and plan.fallback.top_k == 3
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "exclusiveMinimum": 0},
            "b": {"type": ["string", "null"], "minLength": 2},
            "c": {"type": "array", "items": {"type": "boolean"}, "minItems": 1},
            "d": {"const": "x"},
            "e": {"type": "number", "maximum": -1},
            "f": {"type": "string"},
        },
        "required": ["a", "b", "c", "d", "e"],
    }
    assert minimal_instance(schema) == {"a": 1, "b": "xx", "c": [False], "d": "x", "e": -1}
