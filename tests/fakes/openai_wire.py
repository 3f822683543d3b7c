"""What the fake OpenAI server puts on the wire: a chat completion as JSON and as the
chunks of a stream, OpenAI-style errors, and rough token counts.

JSON goes out as real UTF-8 rather than ``\\u`` escapes, so clients are tested on it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass
class Answer:
    """One chat answer, whatever the request asked it as."""

    content: str | None
    tool_calls: list[dict[str, Any]]
    usage: dict[str, int]

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return "" if content is None else str(content)


def rough_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def pieces(text: str, size: int = 4) -> Iterator[str]:
    """Words with their trailing space, long words cut into ``size``-character groups.

    Cuts are on code points, never bytes, so Korean survives the SSE encoding intact.
    """
    for word in re.findall(r"\S+\s*|\s+", text):
        for i in range(0, len(word), size):
            yield word[i : i + size]


def error_body(status: int) -> dict[str, Any]:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_exceeded",
    }
    kind = kinds.get(status, "server_error")
    return {
        "error": {
            "message": f"injected failure ({status})",
            "type": kind,
            "param": None,
            "code": kind,
        }
    }


def completion_body(completion_id: str, model: str, answer: Answer) -> dict[str, Any]:
    """The ``chat.completion`` body of an answer that is not streamed."""
    message: dict[str, Any] = {
        "role": "assistant",
        "content": answer.content,
        "refusal": None,
    }
    if answer.tool_calls:
        message["tool_calls"] = answer.tool_calls
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": answer.finish_reason,
            }
        ],
        "usage": answer.usage,
    }


def stream_events(
    completion_id: str, model: str, answer: Answer, *, include_usage: bool
) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` events of a streamed answer, in order: the role, the
    text in small pieces, each tool call's name then its arguments, the finish reason,
    and the usage when the request asked for it."""
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }

    events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
    events += [chunk({"content": piece}) for piece in pieces(answer.content or "")]
    for index, call in enumerate(answer.tool_calls):
        head = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["function"]["name"], "arguments": ""},
        }
        events.append(chunk({"tool_calls": [head]}))
        arguments = call["function"]["arguments"]
        for i in range(0, len(arguments), 8):
            part = {"index": index, "function": {"arguments": arguments[i : i + 8]}}
            events.append(chunk({"tool_calls": [part]}))
    events.append(chunk({}, answer.finish_reason))
    if include_usage:
        events.append({**chunk({}), "choices": [], "usage": answer.usage})
    return events
