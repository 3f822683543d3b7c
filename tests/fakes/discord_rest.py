"""The fake Discord's REST routes (API v10), applied to the model in :mod:`discord_server`.

Only what a chat bot uses: login, command sync, interaction callbacks and webhook
edits and followups (sent, edited, deleted), channel messages (posted, edited,
deleted), threads started from a message, DM channels.
Any other route answers 404, and the call is recorded, so a test sees it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from aiohttp import web

from tests.fakes.discord_history import add_history_routes
from tests.fakes.discord_payloads import (
    APP_ID,
    BOT,
    BOT_ID,
    TOKEN,
    application_payload,
    dm_channel,
    message_payload,
    snowflake,
)
from tests.fakes.discord_wire import (
    BODY,
    EPHEMERAL,
    LOADING,
    apply_edit,
    error,
    invalid,
    json_response,
)

if TYPE_CHECKING:
    from tests.fakes.discord_model import InteractionState
    from tests.fakes.discord_server import FakeDiscord

CHAT_INPUT_COMMAND = 20

ORIGINAL = "PATCH /webhooks/{application_id}/{token}/messages/@original"
FOLLOWUP = "POST /webhooks/{application_id}/{token}"
CALLBACK = "POST /interactions/{interaction_id}/{token}/callback"
CHANNEL_MESSAGE = "POST /channels/{channel_id}/messages"
EDIT_MESSAGE = "PATCH /channels/{channel_id}/messages/{message_id}"
DELETE_MESSAGE = "DELETE /channels/{channel_id}/messages/{message_id}"
EDIT_FOLLOWUP = "PATCH /webhooks/{application_id}/{token}/messages/{message_id}"
DELETE_FOLLOWUP = "DELETE /webhooks/{application_id}/{token}/messages/{message_id}"
START_THREAD = "POST /channels/{channel_id}/messages/{message_id}/threads"
GLOBAL_COMMANDS = "PUT /applications/{application_id}/commands"
GUILD_COMMANDS = "PUT /applications/{application_id}/guilds/{guild_id}/commands"


def add_routes(app: web.Application, fake: FakeDiscord) -> None:
    def body_of(request: web.Request) -> dict[str, Any]:
        body = request[BODY]
        return body if isinstance(body, dict) else {}

    def authorised(request: web.Request) -> bool:
        return request.headers.get("Authorization") == f"Bot {TOKEN}"

    async def me(request: web.Request) -> web.Response:
        if not authorised(request):
            return error(401, 0, "401: Unauthorized")
        return json_response(BOT.user() | {"verified": True, "mfa_enabled": False})

    async def application(request: web.Request) -> web.Response:
        return json_response(application_payload())

    async def gateway_bot(request: web.Request) -> web.Response:
        return json_response(
            {
                "url": fake.gateway_url,
                "shards": fake.recommended_shards,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 1000,
                    "reset_after": 0,
                    "max_concurrency": 1,
                },
            }
        )

    async def sync(request: web.Request) -> web.Response:
        guild = request.match_info.get("guild_id")
        commands = [
            command
            | {
                "id": str(snowflake()),
                "application_id": str(APP_ID),
                "version": str(snowflake()),
                "default_member_permissions": None,
                "type": command.get("type", 1),
                # Discord answers a message command's (which has none) with ""
                "description": command.get("description", ""),
            }
            | ({"guild_id": guild} if guild else {})
            for command in cast(list[dict[str, Any]], request[BODY])
        ]
        with fake.lock:
            fake.commands[int(guild) if guild else None] = commands
        return json_response(commands)

    def interaction(request: web.Request) -> InteractionState | None:
        token = request.match_info["token"]
        with fake.lock:
            return next((i for i in fake.interactions.values() if i.token == token), None)

    def use_token(state: InteractionState | None) -> web.Response | None:
        """Webhook calls on an interaction token: refused once it is expired or used up."""
        if state is not None and state.token_uses is not None:
            if state.token_uses <= 0:
                state.expired = True
            state.token_uses -= 1
        if state is None or state.expired:
            return error(401, 50027, "Invalid Webhook Token")
        return None

    async def callback(request: web.Request) -> web.Response:
        state = interaction(request)
        if state is None or state.expired or str(state.id) != request.match_info["interaction_id"]:
            return error(404, 10062, "Unknown interaction")
        if state.acked:
            return error(400, 40060, "Interaction has already been acknowledged.")
        body = body_of(request)
        kind, data = body.get("type"), body.get("data") or {}
        flags = int(data.get("flags") or 0)
        if kind == 5:
            message = message_payload(
                snowflake(),
                state.channel_id,
                BOT,
                "",
                flags=flags | LOADING,
                message_type=CHAT_INPUT_COMMAND,
                webhook_id=APP_ID,
            )
        elif kind == 4:
            refused = invalid(data, creating=True)
            if refused is not None:
                return refused
            message = message_payload(
                snowflake(),
                state.channel_id,
                BOT,
                data.get("content") or "",
                embeds=data.get("embeds"),
                components=data.get("components"),
                flags=flags,
                message_type=CHAT_INPUT_COMMAND,
                webhook_id=APP_ID,
            )
        else:
            return error(400, 50035, f"the fake does not know response type {kind}")
        with fake.lock:
            state.acked, state.original_id = True, int(message["id"])
            fake.messages[int(message["id"])] = message
        if request.query.get("with_response") not in ("1", "true", "True"):
            return web.Response(status=204)
        return json_response(
            {
                "interaction": {
                    "id": str(state.id),
                    "type": 2,
                    "response_message_id": message["id"],
                    "response_message_loading": kind == 5,
                    "response_message_ephemeral": bool(flags & EPHEMERAL),
                },
                "resource": {"type": kind, "message": message},
            }
        )

    async def edit_original(request: web.Request) -> web.Response:
        state = interaction(request)
        refused = use_token(state)
        if refused is not None:
            return refused
        assert state is not None
        if state.original_id is None:
            return error(404, 10008, "Unknown Message")
        return edit(fake.messages, state.original_id, body_of(request))

    async def followup(request: web.Request) -> web.Response:
        state = interaction(request)
        refused = use_token(state) or invalid(body_of(request), creating=True)
        if refused is not None:
            return refused
        assert state is not None
        body = body_of(request)
        message = message_payload(
            snowflake(),
            state.channel_id,
            BOT,
            body.get("content") or "",
            embeds=body.get("embeds"),
            components=body.get("components"),
            flags=int(body.get("flags") or 0),
            webhook_id=APP_ID,
        )
        with fake.lock:
            fake.messages[int(message["id"])] = message
            state.followup_ids.append(int(message["id"]))
        return json_response(message)

    def own_followup(request: web.Request) -> tuple[web.Response | None, int]:
        """A webhook call on one of the interaction's followups: (refusal, message id)."""
        state = interaction(request)
        refused = use_token(state)
        message_id = int(request.match_info["message_id"])
        if refused is None and (state is None or message_id not in state.followup_ids):
            refused = error(404, 10008, "Unknown Message")
        return refused, message_id

    async def edit_followup(request: web.Request) -> web.Response:
        refused, message_id = own_followup(request)
        return refused or edit(fake.messages, message_id, body_of(request))

    async def delete_followup(request: web.Request) -> web.Response:
        refused, message_id = own_followup(request)
        return refused or remove(message_id)

    def remove(message_id: int) -> web.Response:
        with fake.lock:
            message = fake.messages.get(message_id)
            if message is None or int(message["author"]["id"]) != BOT_ID:
                return error(404, 10008, "Unknown Message")
            del fake.messages[message_id]
        return web.Response(status=204)

    def edit(
        messages: dict[int, dict[str, Any]], message_id: int, body: dict[str, Any]
    ) -> web.Response:
        refused = invalid(body, creating=False)
        if refused is not None:
            return refused
        with fake.lock:
            message = messages.get(message_id)
            if message is None or int(message["author"]["id"]) != BOT_ID:
                return error(404, 10008, "Unknown Message")
            apply_edit(message, body)
            return json_response(message)

    async def create_message(request: web.Request) -> web.Response:
        body = body_of(request)
        refused = invalid(body, creating=True)
        if refused is not None:
            return refused
        channel_id = int(request.match_info["channel_id"])
        with fake.lock:
            channel = fake.channels.get(channel_id)
        if channel is None:
            return error(404, 10003, "Unknown Channel")
        reference = body.get("message_reference")
        if reference is not None:  # ids come back as strings, as from Discord
            reference = {k: str(v) if k.endswith("_id") else v for k, v in reference.items()}
        message = message_payload(
            snowflake(),
            channel_id,
            BOT,
            body.get("content") or "",
            embeds=body.get("embeds"),
            components=body.get("components"),
            reference=reference,
            message_type=19 if reference else 0,
        )
        with fake.lock:
            fake.messages[int(message["id"])] = message
        guild_id = int(channel["guild_id"]) if "guild_id" in channel else None
        event = message | ({"guild_id": str(guild_id), "member": BOT.member()} if guild_id else {})
        await fake.dispatch("MESSAGE_CREATE", event, guild_id)  # Discord echoes the bot's own
        return json_response(message)

    async def edit_message(request: web.Request) -> web.Response:
        return edit(fake.messages, int(request.match_info["message_id"]), body_of(request))

    async def delete_message(request: web.Request) -> web.Response:
        return remove(int(request.match_info["message_id"]))

    async def start_thread(request: web.Request) -> web.Response:
        channel_id = int(request.match_info["channel_id"])
        message_id = int(request.match_info["message_id"])
        if channel_id in fake.no_thread_channels:
            return error(403, 50013, "Missing Permissions")
        name = str(body_of(request).get("name") or "")
        if not 1 <= len(name) <= 100:
            return json_response({"code": 50035, "message": "Invalid Form Body"}, 400)
        if fake.thread_of(message_id) is not None:
            return error(400, 160004, "A thread has already been created for this message")
        archive = int(body_of(request).get("auto_archive_duration") or 1440)
        thread = fake.new_thread(channel_id, message_id, name, archive)
        await fake.dispatch(
            "THREAD_CREATE", thread | {"newly_created": True}, int(thread["guild_id"])
        )
        return json_response(thread)

    async def open_dm(request: web.Request) -> web.Response:
        person = fake.people[int(body_of(request)["recipient_id"])]
        channel_id = fake.dm_channel_for(person)
        return json_response(dm_channel(channel_id, person))

    async def typing(request: web.Request) -> web.Response:
        return web.Response(status=204)

    async def unknown(request: web.Request) -> web.Response:
        return error(404, 0, f"404: the fake Discord has no {request.method} {request.path}")

    api = "/api/v10"
    app.router.add_get(f"{api}/users/@me", me)
    app.router.add_get(f"{api}/oauth2/applications/@me", application)
    app.router.add_get(f"{api}/gateway/bot", gateway_bot)
    app.router.add_put(f"{api}/applications/{{application_id}}/commands", sync)
    app.router.add_put(f"{api}/applications/{{application_id}}/guilds/{{guild_id}}/commands", sync)
    app.router.add_post(f"{api}/interactions/{{interaction_id}}/{{token}}/callback", callback)
    app.router.add_patch(
        f"{api}/webhooks/{{application_id}}/{{token}}/messages/@original", edit_original
    )
    followup_message = f"{api}/webhooks/{{application_id}}/{{token}}/messages/{{message_id}}"
    # After @original, which is matched first for that path.
    app.router.add_patch(followup_message, edit_followup)
    app.router.add_delete(followup_message, delete_followup)
    app.router.add_post(f"{api}/webhooks/{{application_id}}/{{token}}", followup)
    app.router.add_post(f"{api}/channels/{{channel_id}}/messages", create_message)
    app.router.add_patch(f"{api}/channels/{{channel_id}}/messages/{{message_id}}", edit_message)
    app.router.add_delete(f"{api}/channels/{{channel_id}}/messages/{{message_id}}", delete_message)
    app.router.add_post(
        f"{api}/channels/{{channel_id}}/messages/{{message_id}}/threads", start_thread
    )
    app.router.add_post(f"{api}/channels/{{channel_id}}/typing", typing)
    app.router.add_post(f"{api}/users/@me/channels", open_dm)
    add_history_routes(app, fake, api)  # what the discord source kind reads
    app.router.add_route("*", "/{tail:.*}", unknown)
