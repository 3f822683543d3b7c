"""The chat client the agent's models use (agent/llm_client.py), on the wire.

Requests leave through the SDK's ``extra_body`` and replies come back as plain dicts;
what reaches the (fake) endpoint must still be the whole request langchain built, and
what comes back must still be the text, the usage and the tool calls, in Korean too.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool

from agent.llm import LLMError, LLMs, invoke_with_tools, openai_llms, stream_text, structured
from agent.schemas import Analysis
from tests.agent_support import analysis
from tests.fakes.openai_server import FakeOpenAI, Reply

MESSAGES = [SystemMessage("시스템: 문서로만 답하세요."), HumanMessage("백업은 며칠 보관되나요?")]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


def models(fake: FakeOpenAI) -> LLMs:
    return openai_llms(
        fast_model="fast-model",
        chat_model="chat-model",
        base_url=fake.base_url,
        api_key="k",
        timeout_s=5.0,
        max_retries=0,
    )


async def test_a_structured_call_sends_the_whole_request_and_parses_the_reply(
    fake: FakeOpenAI,
) -> None:
    fake.reply("Analysis", analysis(variations=["백업 보관 기간"]))
    parsed, usage = await structured(models(fake).fast, Analysis, MESSAGES)
    assert parsed.variations == ["백업 보관 기간"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    body = fake.chat_requests[-1]
    assert body["model"] == "fast-model" and body["temperature"] == 0.0
    assert [m["content"] for m in body["messages"]] == [m.content for m in MESSAGES]
    assert body["response_format"]["json_schema"]["name"] == "Analysis"
    assert body["response_format"]["json_schema"]["strict"] is True
    assert not body.get("stream")


async def test_a_streamed_answer_arrives_piece_by_piece_with_its_usage(fake: FakeOpenAI) -> None:
    fake.reply("text", Reply(content="백업은 35일 동안 보관됩니다 [1].", usage=(40, 9)))
    pieces: list[str] = []
    text, usage = await stream_text(models(fake).chat, MESSAGES, pieces.append)
    assert text == "백업은 35일 동안 보관됩니다 [1]." and len(pieces) > 3
    assert "".join(pieces) == text
    assert usage == {"prompt_tokens": 40, "completion_tokens": 9}
    body = fake.chat_requests[-1]
    assert body["model"] == "chat-model" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


async def test_tools_go_out_and_tool_calls_come_back(fake: FakeOpenAI) -> None:
    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression."""
        return expression

    fake.reply("tools", Reply(tool_calls=[("calculator", {"expression": "2+3"})]))
    reply, _ = await invoke_with_tools(models(fake).chat, [calculator], MESSAGES)
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [
        ("calculator", {"expression": "2+3"})
    ]
    sent = fake.chat_requests[-1]["tools"]
    assert [t["function"]["name"] for t in sent] == ["calculator"]


@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limited"), (500, "http_error")])
async def test_an_endpoint_error_is_still_the_sdks_error(
    fake: FakeOpenAI, status: int, kind: str
) -> None:
    fake.reply("Analysis", Reply(status=status))
    with pytest.raises(LLMError) as caught:
        await structured(models(fake).fast, Analysis, MESSAGES)
    assert caught.value.kind == kind


async def test_a_stream_that_goes_quiet_fails_as_a_timeout_with_what_it_had_shown(
    fake: FakeOpenAI,
) -> None:
    fake.reply("text", Reply(content="백업은 35일 동안 보관됩니다.", stall=(3, 2.0)))
    chat = openai_llms(
        fast_model="f", chat_model="c", base_url=fake.base_url, api_key="k", timeout_s=0.5
    ).chat
    pieces: list[str] = []
    with pytest.raises(LLMError) as caught:
        await stream_text(chat, MESSAGES, pieces.append)
    assert caught.value.kind == "timeout"
    assert pieces and "".join(pieces) != "백업은 35일 동안 보관됩니다."  # cut off mid-answer
