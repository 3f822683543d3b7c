"""Thumbs up and down under an answer, recorded with the answer they are about.

The answer's id travels in the button's ``custom_id`` (``teamrag:up:<answer_id>``;
the answer itself was stored with :meth:`FeedbackStore.remember` before posting).
The buttons are a discord.py ``DynamicItem``: registered once per client, they match
any message's buttons by pattern, so clicks on answers posted before a restart still
count, and no per-message view is kept in memory.
"""

from __future__ import annotations

import logging
import re
from typing import Any, cast

import discord

from adapters.chat.feedback import Rating
from adapters.chat.phrases import Phrase, phrase
from adapters.discord.options import Adapter, adapter_of
from adapters.discord.render import language_for

log = logging.getLogger(__name__)

PREFIX = "teamrag"
# Answer ids are short hex strings; the bound keeps the custom_id within Discord's 100.
TEMPLATE = re.compile(rf"{PREFIX}:(?P<rating>up|down):(?P<answer_id>[0-9A-Za-z_-]{{1,64}})")
_EMOJI: dict[Rating, str] = {"up": "👍", "down": "👎"}


def custom_id(rating: Rating, answer_id: str) -> str:
    return f"{PREFIX}:{rating}:{answer_id}"


class FeedbackButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=TEMPLATE):
    def __init__(self, rating: Rating, answer_id: str) -> None:
        super().__init__(
            discord.ui.Button(
                style=discord.ButtonStyle.secondary,
                emoji=_EMOJI[rating],
                custom_id=custom_id(rating, answer_id),
            )
        )
        self.rating: Rating = rating
        self.answer_id = answer_id

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> FeedbackButton:
        return cls(cast(Rating, match["rating"]), match["answer_id"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await record_vote(adapter_of(interaction.client), interaction, self.rating, self.answer_id)


def feedback_view(answer_id: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(FeedbackButton("up", answer_id))
    view.add_item(FeedbackButton("down", answer_id))
    return view


async def record_vote(
    adapter: Adapter, interaction: discord.Interaction[Any], rating: Rating, answer_id: str
) -> None:
    """Store the vote and thank the voter privately (or say the answer is gone)."""
    if not await adapter.services.dedupe.first(f"discord:interaction:{interaction.id}"):
        return  # a replayed click: the first delivery already answered
    try:
        saved = await adapter.services.feedback.rate(answer_id, str(interaction.user.id), rating)
    except Exception:
        log.exception("could not store a %s vote on answer %s", rating, answer_id)
        saved = False
    name: Phrase = (
        ("thanks_up" if rating == "up" else "thanks_down") if saved else "feedback_expired"
    )
    try:
        await interaction.response.send_message(
            phrase(name, language_for("", interaction.locale)), ephemeral=True
        )
    except discord.HTTPException:
        log.warning("could not acknowledge a vote on answer %s", answer_id, exc_info=True)
