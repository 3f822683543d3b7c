"""The Slack and Discord history kinds, registered from bots/ (agent/ never imports the
platform adapters)."""

from __future__ import annotations

from agent.sources.registry import KindRegistry
from bots.settings import Settings


def register_chat_kinds(registry: KindRegistry, settings: Settings) -> None:
    """The slack and discord history kinds register here (not built yet)."""
    del registry, settings
