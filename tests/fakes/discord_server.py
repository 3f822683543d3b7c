"""A local Discord for tests: its REST API and its gateway, over real HTTP and websocket.

The real discord.py client logs in (``/users/@me``, ``/oauth2/applications/@me``),
syncs its commands, connects to the gateway (:mod:`tests.fakes.discord_gateway`) and
then gets what a test injects: slash and message commands, button clicks, messages.
Everything it sends back is recorded (:attr:`FakeDiscord.calls`) and applied to a small model of
Discord (:mod:`tests.fakes.discord_model`: messages with their content, embeds and
buttons; threads; interaction responses), so a test asserts on what a user would see.

Like Discord, the fake refuses what Discord refuses: content over 2,000 characters,
embed descriptions over 4,096, more than 10 embeds or 6,000 embed characters in a
message, thread names outside 1-100 characters (400, code 50035). A test can make any
route fail (:meth:`FakeDiscord.fail`): 429 with ``retry_after``, 403 Missing
Permissions (50013), 404 Unknown interaction (10062); or hold a call unanswered
(:meth:`FakeDiscord.hold`: the request a process has in flight when it is killed).
Responses carry Content-Type exactly ``application/json``, as discord.py requires to
parse them.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import re
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

from aiohttp import web

from tests.fakes.background import BackgroundApp
from tests.fakes.discord_gateway import Gateway, NotConnected
from tests.fakes.discord_model import DiscordModel, InteractionState
from tests.fakes.discord_payloads import (
    BOT,
    Guild,
    Person,
    interaction_payload,
    message_payload,
    snowflake,
)
from tests.fakes.discord_rest import add_routes
from tests.fakes.discord_wire import HELD, Call, Failure, Failures, Hold, Holds, recording

GUILD_ID = 1_100_000_000_000_000_000
OTHER_GUILD_ID = GUILD_ID + (1 << 22)  # carried by the other shard of two
GENERAL = 1_100_000_000_000_000_010
NO_THREADS = 1_100_000_000_000_000_011  # the bot may not create threads here
OTHER_GENERAL = 1_100_000_000_000_000_020
ENGINEER_ROLE = 1_100_000_000_000_000_030
ALICE = Person(1_100_000_000_000_000_100, "alice")
BOB = Person(1_100_000_000_000_000_101, "bob")
OTHER_BOT = Person(1_100_000_000_000_000_102, "otherbot", bot=True)


class FakeDiscord(DiscordModel):
    def __init__(self) -> None:
        self.guilds: dict[int, Guild] = {}
        self.channels: dict[int, dict[str, Any]] = {}
        self.messages: dict[int, dict[str, Any]] = {}
        self.interactions: dict[int, InteractionState] = {}
        self.threads: list[int] = []
        self.commands: dict[int | None, list[dict[str, Any]]] = {}
        self.calls: list[Call] = []
        self.no_thread_channels: set[int] = {NO_THREADS}
        self.recommended_shards = 1
        self.people = {p.id: p for p in (ALICE, BOB, OTHER_BOT, BOT)}
        self.dm_channels: dict[int, int] = {}
        self._failures = Failures()
        self._holds = Holds()
        self._events: dict[int, tuple[str, dict[str, Any], int | None]] = {}
        # When each injected event left for the client (monotonic), by interaction or
        # message id: the start of the clock for latency figures.
        self.sent_at: dict[int, float] = {}
        self.lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self.base = ""
        self.gateway = Gateway(lambda: self.gateway_url, self._guild_creates)
        main = Guild(GUILD_ID, "Sora Labs", roles={ENGINEER_ROLE: "engineer"})
        main.text_channel(GENERAL, "general")
        main.text_channel(NO_THREADS, "announcements")
        other = Guild(OTHER_GUILD_ID, "Other team")
        other.text_channel(OTHER_GENERAL, "general")
        for guild in (main, other):
            self.guilds[guild.id] = guild
            self.channels.update(guild.channels)
        app = web.Application(
            middlewares=[recording(self.calls, self.lock, self._failures, self._holds)]
        )
        app.on_startup.append(self._started)
        app.router.add_get("/gateway", self.gateway.handle)
        add_routes(app, self)
        self._server = BackgroundApp(app)

    # -- running -------------------------------------------------------------------

    def start(self) -> FakeDiscord:
        self.base = self._server.start()
        return self

    def stop(self) -> None:
        self._holds.release()
        self._server.stop()

    @property
    def api_base(self) -> str:
        return f"{self.base}/api/v10"

    @property
    def gateway_url(self) -> str:
        return self.base.replace("http://", "ws://", 1) + "/gateway"

    async def _started(self, app: web.Application) -> None:
        self._loop = asyncio.get_running_loop()

    async def _on_fake_loop(self, work: Coroutine[Any, Any, Any]) -> Any:
        assert self._loop is not None, "start() the fake first"
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work, self._loop))

    # -- what a test does ----------------------------------------------------------

    def add_guild(self, name: str) -> tuple[int, int]:
        """Another guild with one text channel, before the bot connects: (guild, channel)."""
        guild, channel = Guild(snowflake(), name), snowflake()
        guild.text_channel(channel, "general")
        with self.lock:
            self.guilds[guild.id] = guild
            self.channels.update(guild.channels)
        return guild.id, channel

    def fail(
        self,
        route: str,
        *,
        status: int,
        code: int = 0,
        message: str = "",
        times: int = 1,
        retry_after: float | None = None,
        when: Callable[[Any], bool] | None = None,
    ) -> None:
        """Answer the next ``times`` calls to ``route`` ("POST /channels/{channel_id}/messages")
        whose body satisfies ``when`` with an error instead."""
        self._failures.add(Failure(route, status, code, message, times, retry_after, when))

    def hold(
        self, route: str, *, times: int = 1, when: Callable[[Any], bool] | None = None
    ) -> None:
        """Hold the next ``times`` calls to ``route`` whose body satisfies ``when``: each is
        recorded (status 0) and left unanswered and unapplied, as a request still in
        flight when the process that sent it is killed, until :meth:`release`."""
        self._holds.add(Hold(route, times, when))

    def held(self, route: str) -> list[Call]:
        return [c for c in self.calls_to(route) if c.status == HELD]

    def release(self) -> None:
        """Answer every held call (with an error: nothing of it is applied)."""
        self._holds.release()

    def delete(self, message_id: int) -> None:
        """A message deleted by a person (Unknown Message from then on)."""
        with self.lock:
            del self.messages[message_id]

    def post_as_bot(self, channel: int, content: str, components: list[dict[str, Any]]) -> int:
        """A message the bot posted earlier (before a restart, say); returns its id."""
        message = message_payload(snowflake(), channel, BOT, content, components=components)
        with self.lock:
            self.messages[int(message["id"])] = message
        return int(message["id"])

    async def slash(
        self,
        question: str,
        *,
        private: bool | None = None,
        person: Person = ALICE,
        roles: tuple[int, ...] = (),
        channel: int = GENERAL,
        dm: bool = False,
        locale: str = "en-US",
        expired: bool = False,
        token_uses: int | None = None,
        age_s: float = 0.0,
    ) -> int:
        """``/ask question: ...`` typed by ``person``; returns the interaction id.

        ``expired``: Discord no longer knows the interaction (10062); ``token_uses``: the
        webhook calls its token allows before it dies; ``age_s``: how long ago it was
        created, as its id tells."""
        options: list[dict[str, Any]] = [{"name": "question", "type": 3, "value": question}]
        if private is not None:
            options.append({"name": "private", "type": 5, "value": private})
        guild = None if dm else self._guild_of(channel)
        command = self._command("ask", guild.id if guild else None)
        data: dict[str, Any] = {"id": command["id"], "name": "ask", "type": 1, "options": options}
        if command.get("guild_id"):
            data["guild_id"] = command["guild_id"]
        return await self._interact(
            2, data, person, roles, channel, dm, locale, None, expired, token_uses, age_s
        )

    async def message_command(
        self,
        name: str,
        message_id: int,
        *,
        person: Person = ALICE,
        roles: tuple[int, ...] = (),
        locale: str = "en-US",
    ) -> int:
        """The message command ``name`` picked from message ``message_id``'s *Apps* menu
        (application command type 3: ``target_id`` and the message in
        ``resolved.messages``, as Discord sends it); returns the interaction id."""
        message = self.message(message_id)
        channel = int(message["channel_id"])
        dm = self.channels[channel]["type"] == 1
        guild = None if dm else self._guild_of(channel)
        command = self._command(name, guild.id if guild else None)
        data: dict[str, Any] = {
            "id": command["id"],
            "name": name,
            "type": 3,
            "target_id": str(message_id),
            "resolved": {"messages": {str(message_id): message}},
        }
        if command.get("guild_id"):
            data["guild_id"] = command["guild_id"]
        return await self._interact(
            2, data, person, roles, channel, dm, locale, None, False, None, 0.0
        )

    async def click(
        self, message_id: int, custom_id: str, *, person: Person = ALICE, locale: str = "en-US"
    ) -> int:
        """A click on the button ``custom_id`` of message ``message_id``."""
        message = self.message(message_id)
        channel = int(message["channel_id"])
        dm = channel not in self.channels or self.channels[channel]["type"] == 1
        data = {"custom_id": custom_id, "component_type": 2}
        return await self._interact(
            3, data, person, (), channel, dm, locale, message, False, None, 0.0
        )

    async def say(
        self,
        content: str,
        *,
        person: Person = ALICE,
        channel: int = GENERAL,
        roles: tuple[int, ...] = (),
        dm: bool = False,
        message_type: int = 0,
    ) -> int:
        """A message typed by ``person`` (in a DM with the bot when ``dm``); returns its id."""
        if dm:
            channel = self.dm_channel_for(person)
        mentioned = [self.people[int(i)] for i in re.findall(r"<@!?(\d+)>", content)]
        role_ids = [int(i) for i in re.findall(r"<@&(\d+)>", content)]
        message_id = snowflake()
        payload = message_payload(
            message_id,
            channel,
            person,
            content,
            mentions=mentioned,
            role_mentions=role_ids,
            message_type=message_type,
        )
        guild = None if dm else self._guild_of(channel)
        if guild is not None:
            payload |= {"guild_id": str(guild.id), "member": person.member(roles)}
        with self.lock:
            self.messages[message_id] = payload
        await self._inject(message_id, "MESSAGE_CREATE", payload, guild.id if guild else None)
        return message_id

    async def reconnect(self, *, replay: list[int], guild_id: int | None = GUILD_ID) -> None:
        """RECONNECT the client; after it resumes, deliver the injected events ``replay``
        (interaction or message ids) once more."""
        events = [(self._events[i][0], self._events[i][1]) for i in replay]
        await self._on_fake_loop(self.gateway.reconnect(guild_id, events))

    # -- inside the fake -----------------------------------------------------------

    def _command(self, name: str, guild_id: int | None) -> dict[str, Any]:
        with self.lock:
            for scope in (guild_id, None):
                for command in self.commands.get(scope, []):
                    if command["name"] == name:
                        return command
        raise AssertionError(f"/{name} was never synced to the fake Discord")

    async def _interact(
        self,
        kind: int,
        data: dict[str, Any],
        person: Person,
        roles: tuple[int, ...],
        channel: int,
        dm: bool,
        locale: str,
        message: dict[str, Any] | None,
        expired: bool,
        token_uses: int | None,
        age_s: float,
    ) -> int:
        if dm and message is None:
            channel = self.dm_channel_for(person)
        guild = None if dm else self._guild_of(channel)
        interaction_id = snowflake(age_s)
        token = f"token-{interaction_id}"
        payload = interaction_payload(
            interaction_id=interaction_id,
            token=token,
            kind=kind,
            data=data,
            channel=copy.deepcopy(self.channels[channel]),
            guild=guild,
            person=person,
            roles=roles,
            locale=locale,
            message=message,
        )
        state = InteractionState(
            interaction_id, token, channel, guild.id if guild else None, person, expired, token_uses
        )
        with self.lock:
            self.interactions[interaction_id] = state
        await self._inject(interaction_id, "INTERACTION_CREATE", payload, state.guild_id)
        return interaction_id

    async def _inject(
        self, key: int, name: str, payload: dict[str, Any], guild_id: int | None
    ) -> None:
        self._events[key] = (name, payload, guild_id)

        async def send() -> None:
            self.sent_at[key] = time.monotonic()
            await self.gateway.dispatch(name, payload, guild_id)

        await self._on_fake_loop(send())

    async def dispatch(self, name: str, payload: dict[str, Any], guild_id: int | None) -> None:
        """Send an event from inside a request handler (on the fake's own loop); with no
        client connected for the guild's shard (it is closing, or its process was killed
        while another process answers through the REST API) there is nobody to tell."""
        with contextlib.suppress(NotConnected):
            await self.gateway.dispatch(name, payload, guild_id)
