"""``teamrag slack``: the Slack adapter on the configured agent (built by the Slack issue)."""

from __future__ import annotations

from adapters.chat.services import ChatServices
from bots.settings import BotConfigError, Settings


def check_slack_settings(settings: Settings) -> None:
    """Fail before opening anything when a needed variable is missing."""
    raise BotConfigError("the Slack bot is not built yet")


async def serve_slack(settings: Settings, services: ChatServices, *, port: int) -> None:
    raise BotConfigError("the Slack bot is not built yet")
