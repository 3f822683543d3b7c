"""Bounded threads: which old messages to drop, and a summary of what was dropped.

LangGraph's ``add_messages`` rewrites a thread's whole history into every
checkpoint, so the graph removes old messages (``RemoveMessage(id=...)`` for each
one `select_for_trim` picks) and folds them into a running summary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from agent.memory.budget import count_tokens

__all__ = ["extractive_summary", "message_tokens", "select_for_trim"]

# Role markers and separators a chat API adds around each message.
_MESSAGE_OVERHEAD_TOKENS = 4
_SUMMARY_LINE_CHARS = 240
_FIRST_SENTENCE = re.compile(r"(.+?(?:[.!?。！？](?=\s|$)|$))", re.DOTALL)


def message_tokens(message: BaseMessage) -> int:
    return count_tokens(message.text) + _MESSAGE_OVERHEAD_TOKENS


def select_for_trim(
    messages: Sequence[BaseMessage], *, keep_last: int = 12, max_tokens: int = 3000
) -> list[BaseMessage]:
    """The oldest messages to drop so that the rest is at most ``keep_last``
    messages and ``max_tokens`` tokens.

    Messages go in exchanges: a human message with everything after it up to the
    next human message (the answer, tool calls and their results), so an answer
    never loses its question, nor a tool result its call. The latest exchange is
    never dropped, even when it alone is over the limits. System messages are
    neither dropped nor counted: they are instructions, not history.
    """
    exchanges = _exchanges(messages)
    count = sum(len(e) for e in exchanges)
    tokens = sum(message_tokens(m) for e in exchanges for m in e)
    dropped: list[BaseMessage] = []
    for exchange in exchanges[:-1]:
        if count <= keep_last and tokens <= max_tokens:
            break
        dropped.extend(exchange)
        count -= len(exchange)
        tokens -= sum(message_tokens(m) for m in exchange)
    return dropped


def extractive_summary(
    previous_summary: str, dropped: Sequence[BaseMessage], max_chars: int = 1200
) -> str:
    """The previous summary plus a "Q: ... / A: ..." line pair per dropped
    exchange (each message's first sentence), cut to ``max_chars`` by dropping
    the oldest lines first.

    Deterministic, so it stands in for an LLM summary when there is no LLM.
    """
    lines = [line for line in previous_summary.splitlines() if line.strip()]
    for exchange in _exchanges(dropped):
        question = next((m for m in exchange if isinstance(m, HumanMessage)), None)
        answers = [m for m in exchange if isinstance(m, AIMessage) and m.text.strip()]
        if question is not None and question.text.strip():
            lines.append("Q: " + _first_sentence(question.text))
        if answers:
            # The last AI message is the answer; earlier ones announce tool calls.
            lines.append("A: " + _first_sentence(answers[-1].text))
    while lines and len("\n".join(lines)) > max_chars:
        if len(lines) == 1:
            return lines[0][:max_chars].rstrip()
        lines.pop(0)
    return "\n".join(lines)


def _exchanges(messages: Sequence[BaseMessage]) -> list[list[BaseMessage]]:
    exchanges: list[list[BaseMessage]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, HumanMessage) or not exchanges:
            exchanges.append([message])
        else:
            exchanges[-1].append(message)
    return exchanges


def _first_sentence(text: str) -> str:
    flat = " ".join(text.split())
    match = _FIRST_SENTENCE.match(flat)
    sentence = match.group(1).strip() if match else flat
    if len(sentence) > _SUMMARY_LINE_CHARS:
        sentence = sentence[: _SUMMARY_LINE_CHARS - 1].rstrip() + "…"
    return sentence
