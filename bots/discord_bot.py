"""``teamrag discord``: the Discord adapter on the configured agent (built by the Discord issue)."""

from __future__ import annotations

from adapters.chat.services import ChatServices
from bots.settings import BotConfigError, Settings


def check_discord_settings(settings: Settings) -> None:
    """Fail before opening anything when a needed variable is missing."""
    raise BotConfigError("the Discord bot is not built yet")


async def serve_discord(settings: Settings, services: ChatServices) -> None:
    raise BotConfigError("the Discord bot is not built yet")
