"""The fake Discord's gateway: the websocket a discord.py client lives on.

HELLO, then IDENTIFY (token, intents, shard) answered by READY and one GUILD_CREATE
per guild of that shard; heartbeats are acknowledged. Tests push dispatches
(INTERACTION_CREATE, MESSAGE_CREATE...) to the shard that carries the guild. A test
can also send RECONNECT: the client RESUMEs its session, and the fake may then deliver
chosen events again, as Discord may after a resume.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.discord_payloads import APP_ID, BOT, MESSAGE_CONTENT_INTENT, TOKEN, shard_of

Event = tuple[str, dict[str, Any]]


@dataclass
class Session:
    session_id: str
    shard_id: int
    shard_count: int
    intents: int
    ws: web.WebSocketResponse | None
    seq: int = 0
    replay: list[Event] = field(default_factory=list)
    resumes: int = 0


class NotConnected(RuntimeError):
    """No client is connected for the shard that carries the event."""


class Gateway:
    def __init__(
        self,
        url: Callable[[], str],
        guild_creates: Callable[[int, int], list[dict[str, Any]]],
    ) -> None:
        self._url = url
        self._guild_creates = guild_creates
        self.sessions: dict[str, Session] = {}
        self.identifies: list[dict[str, Any]] = []
        self.closes: list[int] = []  # close codes the fake sent
        self.allow_message_content = True

    async def handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await _send(ws, {"op": 10, "d": {"heartbeat_interval": 41250}, "s": None, "t": None})
        session: Session | None = None
        async for msg in ws:
            if msg.type is not WSMsgType.TEXT:
                continue
            packet = json.loads(msg.data)
            op, data = packet.get("op"), packet.get("d")
            if op == 1:
                await _send(ws, {"op": 11, "d": None, "s": None, "t": None})
            elif op == 2:
                session = await self._identify(ws, data)
            elif op == 6:
                session = await self._resume(ws, data)
        if session is not None and session.ws is ws:
            session.ws = None
        return ws

    async def _identify(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> Session | None:
        self.identifies.append(
            {"intents": data.get("intents", 0), "shard": data.get("shard"), "token": data["token"]}
        )
        if data["token"] != TOKEN:
            await self._close(ws, 4004, "Authentication failed.")
            return None
        intents = int(data.get("intents", 0))
        if intents & MESSAGE_CONTENT_INTENT and not self.allow_message_content:
            await self._close(ws, 4014, "Disallowed intent(s).")
            return None
        shard_id, shard_count = data.get("shard") or (0, 1)
        session = Session(uuid.uuid4().hex, shard_id, shard_count, intents, ws)
        self.sessions[session.session_id] = session
        await self._event(
            session,
            "READY",
            {
                "v": 10,
                "user": BOT.user() | {"verified": True, "mfa_enabled": False},
                "guilds": [
                    {"id": g["id"], "unavailable": True}
                    for g in self._guild_creates(shard_id, shard_count)
                ],
                "session_id": session.session_id,
                "resume_gateway_url": self._url(),
                "shard": [shard_id, shard_count],
                "application": {"id": str(APP_ID), "flags": 0},
                "private_channels": [],
                "relationships": [],
                "presences": [],
                "geo_ordered_rtc_regions": [],
                "session_type": "normal",
            },
        )
        for guild in self._guild_creates(shard_id, shard_count):
            await self._event(session, "GUILD_CREATE", guild)
        return session

    async def _resume(self, ws: web.WebSocketResponse, data: dict[str, Any]) -> Session | None:
        session = self.sessions.get(data.get("session_id", ""))
        if session is None or data.get("token") != TOKEN:
            await _send(ws, {"op": 9, "d": False, "s": None, "t": None})
            return None
        session.ws, session.resumes = ws, session.resumes + 1
        await self._event(session, "RESUMED", {})
        replay, session.replay = session.replay, []
        for name, payload in replay:
            await self._event(session, name, payload)
        return session

    async def dispatch(self, name: str, payload: dict[str, Any], guild_id: int | None) -> None:
        await self._event(self._session_for(guild_id), name, payload)

    async def reconnect(self, guild_id: int | None, replay: list[Event]) -> None:
        """Ask the client to reconnect; ``replay`` is delivered again after it resumes."""
        session = self._session_for(guild_id)
        session.replay = list(replay)
        if session.ws is not None:
            await _send(session.ws, {"op": 7, "d": None, "s": None, "t": None})

    def ready_shards(self) -> set[int]:
        return {s.shard_id for s in self.sessions.values() if s.ws is not None}

    def resumes(self) -> int:
        return sum(s.resumes for s in self.sessions.values())

    def _session_for(self, guild_id: int | None) -> Session:
        live = [s for s in self.sessions.values() if s.ws is not None]
        if not live:
            raise NotConnected("no client is connected to the fake gateway")
        wanted = shard_of(guild_id, live[0].shard_count)
        for session in reversed(live):
            if session.shard_id == wanted:
                return session
        raise NotConnected(f"no client is connected for shard {wanted}")

    async def _event(self, session: Session, name: str, payload: dict[str, Any]) -> None:
        session.seq += 1
        if session.ws is not None:
            await _send(session.ws, {"op": 0, "t": name, "s": session.seq, "d": payload})

    async def _close(self, ws: web.WebSocketResponse, code: int, reason: str) -> None:
        self.closes.append(code)
        await ws.close(code=code, message=reason.encode())


async def _send(ws: web.WebSocketResponse, packet: dict[str, Any]) -> None:
    await ws.send_str(json.dumps(packet, ensure_ascii=False))
