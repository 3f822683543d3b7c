"""``/ask question: [private:]`` and the *Ask teamrag* message command: defer at once,
then answer in the deferred response (queued: any process of the bot may answer it).

Discord gives an interaction 3 seconds for its first response, so the handler only
de-duplicates and checks access (both in memory) before deferring with "thinking";
the agent runs after that. ``private`` makes the whole exchange ephemeral. A refusal is
always ephemeral: it concerns only the asker.

*Ask teamrag* (a message context-menu command) takes the message itself as the question
(a pasted customer question, an error log) and answers only the one who used it: the
message's channel belongs to everyone there, and they did not ask. Inside a thread it
joins that thread's conversation, as a mention there would.
"""

from __future__ import annotations

import logging
from typing import Any, cast

import discord
from discord import app_commands
from discord.app_commands import locale_str

from adapters.chat.queue import TurnQueue
from adapters.discord.gates import admitted, roles_of
from adapters.discord.live import ChannelPoster, Poster
from adapters.discord.options import Adapter
from adapters.discord.queued import Asked, ask_job
from adapters.discord.render import Outgoing, language_for
from adapters.discord.turns import Place
from agent.events import Turn
from agent.plumbing.log_context import bind

log = logging.getLogger(__name__)

# Discord shows these in the command picker; Korean clients get the translations below.
ASK = "Ask a question about the team's documents"
QUESTION = "Your question, in Korean or English"
PRIVATE = "Only you see the answer"
ASK_MESSAGE = "Ask teamrag"  # the message command's name (a context menu has no description)
_KOREAN = {
    ASK: "팀 문서에 대해 질문하기",
    QUESTION: "질문 (한국어 또는 영어)",
    PRIVATE: "나만 보기",
    ASK_MESSAGE: "teamrag에게 묻기",
}


class CommandTexts(app_commands.Translator):
    """Korean descriptions for Korean Discord clients (sent along when commands sync)."""

    async def translate(
        self,
        string: locale_str,
        locale: discord.Locale,
        context: app_commands.TranslationContextTypes,
    ) -> str | None:
        return _KOREAN.get(string.message) if locale is discord.Locale.korean else None


def ask_command(adapter: Adapter) -> app_commands.Command[Any, ..., None]:
    @app_commands.command(name="ask", description=locale_str(ASK))
    @app_commands.describe(question=locale_str(QUESTION), private=locale_str(PRIVATE))
    async def ask(
        interaction: discord.Interaction[Any],
        question: app_commands.Range[str, 1, 6000],
        private: bool = False,
    ) -> None:
        await handle_ask(adapter, interaction, question, private=private)

    return ask


def ask_message_menu(adapter: Adapter) -> app_commands.ContextMenu:
    """*Ask teamrag* in a message's *Apps* menu: the message is the question."""

    async def ask_about(interaction: discord.Interaction[Any], message: discord.Message) -> None:
        await handle_ask(adapter, interaction, message.content, private=True, about=message)

    return app_commands.ContextMenu(name=locale_str(ASK_MESSAGE), callback=ask_about)


async def handle_ask(
    adapter: Adapter,
    interaction: discord.Interaction[Any],
    question: str,
    *,
    private: bool,
    about: discord.Message | None = None,
) -> None:
    """``about``: the message asked about (the message command), else None (``/ask``)."""
    services = adapter.services
    if not await services.dedupe.first(f"discord:interaction:{interaction.id}"):
        log.info("interaction %s was delivered again; it is already answered", interaction.id)
        return
    language = language_for(question, interaction.locale)
    place = Place.of(interaction.channel, interaction.guild_id, interaction.channel_id or 0)
    question = question.strip()
    decision = await admitted(
        adapter, place, roles_of(interaction.user), interaction.user.id, question, language
    )
    if isinstance(decision, str):
        await _tell(interaction, decision)
        return
    # In a thread or a DM the question continues that conversation; in a channel it is
    # a question of its own, rooted at the message asked about when there is one (the id
    # a thread opened from that message would have).
    own = about.id if about is not None else interaction.id
    root = place.channel_id if place.in_thread or place.guild_id is None else own
    turn = place.turn(
        question,
        root=root,
        user=interaction.user.id,
        message=interaction.id,
        rule=decision,
    )
    with bind(thread_id=turn.thread_id, event_id=f"interaction-{interaction.id}"):
        await _answer(interaction, turn, language, private=private)


async def _answer(
    interaction: discord.Interaction[Any], turn: Turn, language: str, *, private: bool
) -> None:
    """Defer within Discord's 3 seconds, then queue the answer (any process may give it:
    :mod:`adapters.discord.queued`)."""
    try:
        await interaction.response.defer(thinking=True, ephemeral=private)
        deferred = True
    except discord.HTTPException as exc:
        # Too late (more than 3 s, or the interaction is gone): answer all the same.
        log.warning(
            "could not defer interaction %s (%s); answering by message", interaction.id, exc
        )
        deferred = False
    asked = Asked.of(interaction, private=private, deferred=deferred)
    await queue_of(interaction.client).submit(ask_job(asked, turn, language))


def queue_of(client: discord.Client) -> TurnQueue:
    queue = getattr(client, "queue", None)
    if queue is None:
        raise RuntimeError(f"{type(client).__name__} has no turn queue: not a teamrag client")
    return cast(TurnQueue, queue)


def fallback_poster(interaction: discord.Interaction[Any], *, private: bool) -> Poster:
    """Where the answer goes when the interaction cannot carry it: the channel, with the
    asker mentioned, or the asker's DMs for a private question."""
    user = interaction.user
    channel = interaction.channel
    if private or channel is None:
        return ChannelPoster(user.create_dm)
    if not isinstance(channel, discord.abc.Messageable):
        channel = interaction.client.get_partial_messageable(
            interaction.channel_id or 0, guild_id=interaction.guild_id
        )
    return ChannelPoster(channel, mention=user)


async def _tell(interaction: discord.Interaction[Any], text: str) -> None:
    try:
        await interaction.response.send_message(text, ephemeral=True)
    except discord.HTTPException as exc:
        log.warning("could not reply to interaction %s (%s); sending a DM", interaction.id, exc)
        try:
            await fallback_poster(interaction, private=True).put(0, Outgoing(text), None)
        except discord.HTTPException:
            log.warning("could not tell user %s why there is no answer", interaction.user.id)
