"""The chat client the agent's models use (agent/llm/sdk_client.py), on the wire.

Requests leave through the SDK's ``extra_body`` and replies come back as plain dicts;
what reaches the (fake) endpoint must still be the whole request langchain built, and
what comes back must still be the text, the usage and the tool calls, in Korean too.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool

from agent.llm.calls import (
    LLMError,
    LLMs,
    _Coalesced,
    invoke_with_tools,
    once_sent,
    openai_llms,
    stream_text,
    structured,
)
from agent.llm.schemas import Analysis
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.support.agent_support import analysis

MESSAGES = [SystemMessage("시스템: 문서로만 답하세요."), HumanMessage("백업은 며칠 보관되나요?")]


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
async def llms(fake: FakeOpenAI) -> AsyncIterator[LLMs]:
    made = openai_llms(
        fast_model="fast-model",
        chat_model="chat-model",
        base_url=fake.base_url,
        api_key="k",
        timeout_s=5.0,
        max_retries=0,
    )
    yield made
    await made.aclose()


async def test_a_structured_call_sends_the_whole_request_and_parses_the_reply(
    fake: FakeOpenAI,
    llms: LLMs,
) -> None:
    fake.reply("Analysis", analysis(variations=["백업 보관 기간"]))
    parsed, usage = await structured(llms.fast, Analysis, MESSAGES)
    assert parsed.variations == ["백업 보관 기간"]
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    body = fake.chat_requests[-1]
    assert body["model"] == "fast-model" and body["temperature"] == 0.0
    assert [m["content"] for m in body["messages"]] == [m.content for m in MESSAGES]
    assert body["response_format"]["json_schema"]["name"] == "Analysis"
    assert body["response_format"]["json_schema"]["strict"] is True
    assert not body.get("stream")


async def test_a_streamed_answer_arrives_piece_by_piece_with_its_usage(
    fake: FakeOpenAI, llms: LLMs
) -> None:
    # The fake sends 4 characters a chunk; it pauses after the first two (8 characters).
    answer = "백업은 35일 동안 보관됩니다 [1]."
    fake.reply("text", Reply(content=answer, usage=(40, 9), stall=(3, 0.3)))
    pieces: list[str] = []
    text, usage = await stream_text(llms.chat, MESSAGES, pieces.append)
    assert text == answer and "".join(pieces) == text
    # What came before the pause was shown before it, not held back for the whole answer.
    assert len(pieces) >= 2 and answer[:8].startswith(pieces[0])
    assert usage == {"prompt_tokens": 40, "completion_tokens": 9}
    body = fake.chat_requests[-1]
    assert body["model"] == "chat-model" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


async def test_tools_go_out_and_tool_calls_come_back(fake: FakeOpenAI, llms: LLMs) -> None:
    @tool
    def calculator(expression: str) -> str:
        """Evaluate an arithmetic expression."""
        return expression

    fake.reply("tools", Reply(tool_calls=[("calculator", {"expression": "2+3"})]))
    reply, _ = await invoke_with_tools(llms.chat, [calculator], MESSAGES)
    assert [(c["name"], c["args"]) for c in reply.tool_calls] == [
        ("calculator", {"expression": "2+3"})
    ]
    sent = fake.chat_requests[-1]["tools"]
    assert [t["function"]["name"] for t in sent] == ["calculator"]


@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limited"), (500, "http_error")])
async def test_an_endpoint_error_becomes_an_llm_error_of_its_kind(
    fake: FakeOpenAI, llms: LLMs, status: int, kind: str
) -> None:
    fake.reply("Analysis", Reply(status=status))
    with pytest.raises(LLMError) as caught:
        await structured(llms.fast, Analysis, MESSAGES)
    assert caught.value.kind == kind


async def test_a_stream_that_goes_quiet_fails_as_a_timeout_with_what_it_had_shown(
    fake: FakeOpenAI,
) -> None:
    fake.reply("text", Reply(content="백업은 35일 동안 보관됩니다.", stall=(3, 2.0)))
    quick = openai_llms(
        fast_model="f", chat_model="c", base_url=fake.base_url, api_key="k", timeout_s=0.5
    )
    pieces: list[str] = []
    with pytest.raises(LLMError) as caught:
        await stream_text(quick.chat, MESSAGES, pieces.append)
    await quick.aclose()
    assert caught.value.kind == "timeout"
    assert pieces and "".join(pieces) != "백업은 35일 동안 보관됩니다."  # cut off mid-answer


async def test_once_sent_returns_when_the_request_is_out_not_when_the_reply_is_in(
    fake: FakeOpenAI,
    llms: LLMs,
) -> None:
    fake.reply("Analysis", Reply(delay=2))
    call = await once_sent(structured(llms.fast, Analysis, MESSAGES))
    assert not call.done()
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call


async def test_once_sent_returns_a_call_that_never_left_once_it_has_ended() -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    nowhere = openai_llms(
        fast_model="f", chat_model="c", base_url=f"http://127.0.0.1:{port}/v1", api_key="k",
        timeout_s=5.0, max_retries=0,
    )  # fmt: skip
    call = await once_sent(structured(nowhere.fast, Analysis, MESSAGES))
    assert call.done()
    with pytest.raises(LLMError) as caught:
        await call
    await nowhere.aclose()
    assert caught.value.kind == "unreachable"
    # Anything else that never sends a request is simply waited for.
    plain = await once_sent(asyncio.sleep(0.01, result="done"))
    assert plain.done() and plain.result() == "done"


async def test_pieces_that_arrive_in_one_turn_of_the_loop_are_handed_on_together() -> None:
    shown: list[str] = []
    relay = _Coalesced(shown.append, asyncio.get_running_loop())
    relay("백업은 ")
    relay("35일")
    assert shown == []
    await asyncio.sleep(0)  # the loop's next turn
    assert shown == ["백업은 35일"]
    relay(" 보관")
    relay.flush()  # the stream ended: nothing waits for the loop
    await asyncio.sleep(0)
    assert shown == ["백업은 35일", " 보관"]
