"""Bounded thread history (``agent/memory/trimming.py``): trimming never orphans an
answer and keeps the latest exchange, and the extractive summary of what was trimmed
stays bounded and deterministic."""

from __future__ import annotations

import random

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from agent.memory.trimming import extractive_summary, message_tokens, select_for_trim


def _conversation(rng: random.Random, turns: int) -> list[BaseMessage]:
    messages: list[BaseMessage] = [SystemMessage("system", id="sys")]
    for turn in range(turns):
        messages.append(
            HumanMessage(f"question {turn} " + "단어 " * rng.randint(1, 80), id=f"h{turn}")
        )
        if rng.random() < 0.3:  # an answer that went through a tool first
            messages.append(
                AIMessage(
                    "",
                    id=f"c{turn}",
                    tool_calls=[{"name": "search", "args": {}, "id": f"call{turn}"}],
                )
            )
            messages.append(ToolMessage("results", tool_call_id=f"call{turn}", id=f"t{turn}"))
        messages.append(
            AIMessage(f"answer {turn}. " + "word " * rng.randint(1, 200), id=f"a{turn}")
        )
    return messages


def test_select_for_trim_never_orphans_an_answer() -> None:
    rng = random.Random(3)
    for _ in range(200):
        messages = _conversation(rng, rng.randint(0, 15))
        keep_last, max_tokens = rng.randint(1, 14), rng.randint(50, 3000)
        dropped = select_for_trim(messages, keep_last=keep_last, max_tokens=max_tokens)
        history = [m for m in messages if not isinstance(m, SystemMessage)]
        assert dropped == history[: len(dropped)]  # the oldest, in order
        kept = history[len(dropped) :]
        if kept:
            assert isinstance(kept[0], HumanMessage)  # no answer without its question
            assert kept[-1] is messages[-1]
        exchanges = sum(isinstance(m, HumanMessage) for m in kept)
        if exchanges > 1:
            assert len(kept) <= keep_last
            assert sum(message_tokens(m) for m in kept) <= max_tokens


def test_select_for_trim_keeps_short_threads_and_the_latest_exchange() -> None:
    short = [HumanMessage("hi", id="h"), AIMessage("hello", id="a")]
    assert select_for_trim(short) == []
    huge = [*short, HumanMessage("x" * 40_000, id="h2"), AIMessage("y", id="a2")]
    assert select_for_trim(huge, max_tokens=100) == short


def test_extractive_summary_is_bounded_and_keeps_the_newest() -> None:
    summary = ""
    for turn in range(50):
        dropped = [
            HumanMessage(
                f"백업은 며칠 보관되나요 {turn}? 그리고 다른 질문도 있어요.", id=f"h{turn}"
            ),
            AIMessage(f"Thirty days {turn}. Nightly backups at 02:00.", id=f"a{turn}"),
        ]
        summary = extractive_summary(summary, dropped, max_chars=300)
        assert len(summary) <= 300
    lines = summary.splitlines()
    assert lines[-2:] == ["Q: 백업은 며칠 보관되나요 49?", "A: Thirty days 49."]
    assert all(line.startswith(("Q: ", "A: ")) for line in lines)
    assert "Q: 백업은 며칠 보관되나요 0?" not in summary


def test_extractive_summary_skips_tool_chatter_and_is_deterministic() -> None:
    dropped: list[BaseMessage] = [
        HumanMessage("What is the on-call rotation?\nMore details.", id="h"),
        AIMessage("", id="c", tool_calls=[{"name": "search", "args": {}, "id": "1"}]),
        ToolMessage("raw results", tool_call_id="1", id="t"),
        AIMessage("Weekly, starting Monday. Handover at 10:00.", id="a"),
    ]
    first = extractive_summary("Q: earlier\nA: earlier answer", dropped)
    assert first == (
        "Q: earlier\nA: earlier answer\nQ: What is the on-call rotation?\n"
        "A: Weekly, starting Monday."
    )
    assert extractive_summary("Q: earlier\nA: earlier answer", dropped) == first
    assert len(extractive_summary("", [HumanMessage("z" * 5000, id="h")], max_chars=100)) <= 100
