"""The fake Slack's messages: :class:`Message`, a message as its readers see it now, and
the Web API methods that post, edit, stream and delete them (``chat.*``), with the
assistant pane's, App Home's and ``users.info`` calls. Each method refuses what real
Slack refuses where that is cheap to check (:mod:`tests.fakes.slack_limits`). Mixed
into :class:`tests.fakes.slack_server.FakeSlack`.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.slack_limits import MARKDOWN_TOTAL, block_problems, chunk_problems, texts


@dataclass
class Message:
    """A message as its readers see it now."""

    channel: str
    ts: str
    thread_ts: str | None
    text: str = ""
    blocks: list[dict[str, Any]] = field(default_factory=list)
    stream_text: str = ""  # markdown appended by a stream
    tasks: dict[str, tuple[str, str]] = field(default_factory=dict)  # id -> (title, status)
    state: str = "posted"  # posted, streaming, stopped
    edits: int = 0
    metadata: dict[str, Any] | None = None

    @property
    def markdown(self) -> str:
        """The answer text shown: streamed text, then markdown blocks."""
        blocks = "".join(b.get("text", "") for b in self.blocks if b.get("type") == "markdown")
        return self.stream_text + blocks

    def block_texts(self) -> list[str]:
        return list(texts(self.blocks))

    def feedback_values(self) -> list[str]:
        values = []
        for block in self.blocks:
            for element in block.get("elements", []):
                if element.get("type") == "feedback_buttons":
                    values += [element["positive_button"]["value"]]
                    values += [element["negative_button"]["value"]]
        return values


class ChatAPI:
    messages: dict[str, Message]  # ts -> the message
    views: dict[str, dict[str, Any]]  # user -> the App Home view published
    admins: set[str]
    locales: dict[str, str]  # user -> Slack locale ("ko-KR")

    def _init_chat(self) -> None:
        self.messages, self.views, self.admins, self.locales = {}, {}, set(), {}
        self._ts = itertools.count(1)

    def _new_ts(self) -> str:
        return f"1800000000.{next(self._ts):06d}"

    def _chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        problems = self._message_problems(args)
        if problems:
            return problems
        message = Message(
            channel=str(args["channel"]),
            ts=self._new_ts(),
            thread_ts=args.get("thread_ts") or None,
            text=str(args.get("text") or ""),
            blocks=list(args.get("blocks") or []),
            metadata=_json(args.get("metadata")),
        )
        self.messages[message.ts] = message
        return {"channel": message.channel, "ts": message.ts, "message": {"text": message.text}}

    def _chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        problems = self._message_problems(args)
        if problems:
            return problems
        message = self.messages.get(str(args.get("ts")))
        if message is None or message.channel != args.get("channel"):
            return {"ok": False, "error": "message_not_found"}
        message.text = str(args.get("text") or "")
        message.blocks = list(args.get("blocks") or [])
        message.stream_text = ""  # an edit replaces everything the message showed
        message.edits += 1
        if args.get("metadata"):
            message.metadata = _json(args["metadata"])
        return {"channel": message.channel, "ts": message.ts}

    def _chat_delete(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self.messages.get(str(args.get("ts")))
        if message is None or message.channel != args.get("channel"):
            return {"ok": False, "error": "message_not_found"}
        del self.messages[message.ts]
        return {"channel": message.channel, "ts": message.ts}

    def _chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        problems = self._message_problems(args)
        if problems:
            return problems
        if not args.get("user"):
            return {"ok": False, "error": "user_not_in_channel"}
        return {"message_ts": self._new_ts()}

    def _chat_startStream(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args.get("channel", ""))
        if not args.get("thread_ts"):
            return {"ok": False, "error": "invalid_arguments"}
        in_channel = channel[:1] in ("C", "G")
        if in_channel and not (args.get("recipient_team_id") and args.get("recipient_user_id")):
            return {"ok": False, "error": "invalid_arguments"}
        problems = chunk_problems(args.get("chunks"))
        if problems:
            return {"ok": False, "error": "invalid_chunks", "errors": problems}
        message = Message(channel, self._new_ts(), str(args["thread_ts"]), state="streaming")
        self._apply_chunks(message, args)
        self.messages[message.ts] = message
        return {"channel": channel, "ts": message.ts}

    def _chat_appendStream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._streaming(args)
        if isinstance(message, dict):
            return message
        problems = chunk_problems(args.get("chunks"))
        if problems:
            return {"ok": False, "error": "invalid_chunks", "errors": problems}
        self._apply_chunks(message, args)
        return {"channel": message.channel, "ts": message.ts}

    def _chat_stopStream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self._streaming(args)
        if isinstance(message, dict):
            return message
        problems = chunk_problems(args.get("chunks")) + block_problems(args.get("blocks") or [])
        if problems:
            return {"ok": False, "error": "invalid_blocks", "errors": problems}
        self._apply_chunks(message, args)
        if len(message.stream_text) > MARKDOWN_TOTAL:
            return {"ok": False, "error": "msg_too_long"}
        message.blocks = list(args.get("blocks") or [])
        message.state = "stopped"
        return {"channel": message.channel, "ts": message.ts}

    def _assistant_threads_setStatus(self, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("channel_id") or not args.get("thread_ts") or "status" not in args:
            return {"ok": False, "error": "invalid_arguments"}
        return {}

    def _assistant_threads_setSuggestedPrompts(self, args: dict[str, Any]) -> dict[str, Any]:
        prompts = _json(args["prompts"])
        if not isinstance(prompts, list) or not 1 <= len(prompts) <= 4:
            return {"ok": False, "error": "invalid_arguments"}
        if any(not p.get("title") or not p.get("message") for p in prompts):
            return {"ok": False, "error": "invalid_arguments"}
        return {}

    def _assistant_threads_setTitle(self, args: dict[str, Any]) -> dict[str, Any]:
        return {}

    def _views_publish(self, args: dict[str, Any]) -> dict[str, Any]:
        view = _json(args["view"])
        if view.get("type") != "home" or not 1 <= len(view.get("blocks") or []) <= 100:
            return {"ok": False, "error": "invalid_arguments"}
        problems = block_problems(view["blocks"])
        if problems:
            return {"ok": False, "error": "invalid_blocks", "errors": problems}
        self.views[str(args["user_id"])] = view
        return {"view": view}

    def _users_info(self, args: dict[str, Any]) -> dict[str, Any]:
        user = str(args["user"])
        info = {"id": user, "name": user.lower(), "is_admin": user in self.admins}
        if args.get("include_locale") in (True, "true", "1", 1):
            info["locale"] = self.locales.get(user, "en-US")
        return {"user": info}

    def _streaming(self, args: dict[str, Any]) -> Message | dict[str, Any]:
        message = self.messages.get(str(args.get("ts")))
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        if message.state != "streaming":
            return {"ok": False, "error": "message_not_in_streaming_state"}
        return message

    @staticmethod
    def _apply_chunks(message: Message, args: dict[str, Any]) -> None:
        message.stream_text += str(args.get("markdown_text") or "")
        for chunk in args.get("chunks") or []:
            if chunk["type"] == "markdown_text":
                message.stream_text += chunk["text"]
            elif chunk["type"] == "task_update":
                message.tasks[chunk["id"]] = (chunk["title"], chunk["status"])

    @staticmethod
    def _message_problems(args: dict[str, Any]) -> dict[str, Any] | None:
        if not args.get("channel"):
            return {"ok": False, "error": "channel_not_found"}
        if not args.get("text") and not args.get("blocks"):
            return {"ok": False, "error": "no_text"}
        if len(str(args.get("text") or "")) > 40_000:
            return {"ok": False, "error": "msg_too_long"}
        problems = block_problems(args.get("blocks") or [])
        if problems:
            return {"ok": False, "error": "invalid_blocks", "errors": problems}
        return None


def _json(value: Any) -> Any:
    """A structured argument, whether sent in a JSON body or as a JSON string in a form."""
    return json.loads(value) if isinstance(value, str) else value
