"""The fake Slack's channel history and files: ``conversations.info/history/replies``
(paged with cursors, like Slack) and ``files.info`` with the private download URL.

Tests write the history the way people would (:meth:`HistoryAPI.post_history`), delete
threads, and share files; the fake answers from that model. Mixed into
:class:`tests.fakes.slack_server.FakeSlack`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from aiohttp import web


@dataclass
class SharedFile:
    id: str
    name: str
    mimetype: str
    data: bytes


class HistoryAPI:
    root: str
    history: dict[str, list[dict[str, Any]]]  # channel -> every message, replies too
    channel_info: dict[str, dict[str, Any]]
    files: dict[str, SharedFile]
    downloads: list[str]

    def _init_history(self) -> None:
        self.history, self.channel_info, self.files, self.downloads = {}, {}, {}, []
        self._history_ts = itertools.count(1)

    # --- what a test does ----------------------------------------------------------------

    def add_channel(self, channel: str, name: str, *, private: bool = False) -> None:
        self.channel_info[channel] = {"id": channel, "name": name, "is_private": private}
        self.history.setdefault(channel, [])

    def post_history(
        self, channel: str, text: str, *, user: str = "U0ALICE", thread_ts: str | None = None,
        day: int = 0, **extra: Any,
    ) -> str:  # fmt: skip
        """A message a person wrote (``day`` days after the first day); returns its ts."""
        ts = f"{1767225600 + day * 86400 + next(self._history_ts)}.000100"
        message = {"type": "message", "user": user, "text": text, "ts": ts, **extra}
        if thread_ts:
            message["thread_ts"] = thread_ts
        self.history.setdefault(channel, []).append(message)
        return ts

    def delete_thread(self, channel: str, ts: str) -> None:
        self.history[channel] = [
            m for m in self.history[channel] if ts not in (m["ts"], m.get("thread_ts"))
        ]

    def share_file(self, file_id: str, name: str, mimetype: str, data: bytes) -> dict[str, Any]:
        """A file uploaded to Slack; returns what an event's ``files`` carries."""
        self.files[file_id] = SharedFile(file_id, name, mimetype, data)
        return self._file(self.files[file_id])

    # --- the methods -----------------------------------------------------------------------

    def _conversations_info(self, args: dict[str, Any]) -> dict[str, Any]:
        info = self.channel_info.get(str(args.get("channel")))
        if info is None:
            return {"ok": False, "error": "channel_not_found"}
        return {"channel": info}

    def _conversations_history(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = str(args.get("channel"))
        if channel not in self.channel_info:
            return {"ok": False, "error": "channel_not_found"}
        messages = self.history[channel]
        tops = []
        for m in messages:
            if m.get("thread_ts") not in (None, m["ts"]):
                continue
            replies = [r for r in messages if r.get("thread_ts") == m["ts"] and r is not m]
            if replies:
                m = m | {"thread_ts": m["ts"], "reply_count": len(replies),
                         "latest_reply": max(r["ts"] for r in replies)}  # fmt: skip
            tops.append(m)
        tops.sort(key=lambda m: float(m["ts"]), reverse=True)  # newest first, as Slack does
        return _page(tops, args)

    def _conversations_replies(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(args.get("channel")), str(args.get("ts"))
        thread = [m for m in self.history.get(channel, []) if ts in (m["ts"], m.get("thread_ts"))]
        if not thread:
            return {"ok": False, "error": "thread_not_found"}
        thread.sort(key=lambda m: float(m["ts"]))
        return _page(thread, args)

    def _files_info(self, args: dict[str, Any]) -> dict[str, Any]:
        shared = self.files.get(str(args.get("file")))
        if shared is None:
            return {"ok": False, "error": "file_not_found"}
        return {"file": self._file(shared)}

    def _file(self, shared: SharedFile) -> dict[str, Any]:
        return {
            "id": shared.id,
            "name": shared.name,
            "title": shared.name,
            "mimetype": shared.mimetype,
            "filetype": shared.name.rsplit(".", 1)[-1],
            "size": len(shared.data),
            "url_private_download": f"{self.root}/files/{shared.id}/{shared.name}",
            "permalink": f"https://teamrag-test.slack.com/files/U0ALICE/{shared.id}/{shared.name}",
        }

    async def _download(self, request: web.Request) -> web.Response:
        from tests.fakes.slack_server import BOT_TOKEN

        if request.headers.get("Authorization") != f"Bearer {BOT_TOKEN}":
            # Slack answers an unauthenticated download with its sign-in page, not a 401.
            return web.Response(text="<html>sign in</html>", content_type="text/html")
        shared = self.files.get(request.match_info["id"])
        if shared is None:
            return web.Response(status=404)
        self.downloads.append(shared.id)
        return web.Response(body=shared.data, content_type=shared.mimetype)


def _page(messages: list[dict[str, Any]], args: dict[str, Any]) -> dict[str, Any]:
    start, limit = int(args.get("cursor") or 0), int(args.get("limit") or 100)
    more = start + limit < len(messages)
    return {
        "messages": messages[start : start + limit],
        "has_more": more,
        "response_metadata": {"next_cursor": str(start + limit) if more else ""},
    }
