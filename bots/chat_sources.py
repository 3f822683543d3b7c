"""The Slack and Discord history kinds, registered from bots/ (agent/ never imports the
platform adapters). They take the process's settings: the API base URLs the bots use
and the channel rules that decide which scope a channel's history goes into."""

from __future__ import annotations

from adapters.chat.channels import ChannelRules, ChannelRulesError, load_channel_rules
from agent.sources.base import KindContext, SourceError, SourceKind, SourceSpec
from agent.sources.registry import HTTP_OPTIONS, KindInfo, KindRegistry
from bots.settings import Settings

CHAT_KINDS = ("slack", "discord")

_OPTIONS = {
    "token_env": "environment variable holding the bot token (default SLACK_BOT_TOKEN / "
    "DISCORD_TOKEN)",
    "api_url": "API base URL (default SLACK_API_URL / DISCORD_API_BASE, else the public API)",
    "scope": "put the history in this scope instead of the one the channel rules give",
    **HTTP_OPTIONS,
}


def _rules(settings: Settings) -> ChannelRules:
    """Read at every sync: a change of the rules moves the history at the next sync."""
    try:
        return load_channel_rules(settings.channels_file, settings.channels)
    except ChannelRulesError as exc:
        raise SourceError(
            f"{exc}; the channel rules decide where a channel's history goes"
        ) from None


def register_chat_kinds(registry: KindRegistry, settings: Settings) -> None:
    def slack(spec: SourceSpec, ctx: KindContext) -> SourceKind:
        from adapters.slack.history import SlackHistory

        return SlackHistory(
            spec,
            ctx,
            rules=_rules(settings),
            default_scope=settings.default_scope,
            api_url=settings.slack_api_url,
        )

    def discord(spec: SourceSpec, ctx: KindContext) -> SourceKind:
        from adapters.discord.history import DiscordHistory

        return DiscordHistory(
            spec,
            ctx,
            rules=_rules(settings),
            default_scope=settings.default_scope,
            api_url=settings.discord_api_base,
        )

    registry.register(
        KindInfo(
            "slack",
            "a Slack channel's history by channel id: threads and days",
            slack,
            _OPTIONS | {"attachments": "also the files posted in the channel (PDF, Office, HWP)"},
        )
    )
    registry.register(
        KindInfo(
            "discord",
            "a Discord forum's posts or a text channel's messages, by id",
            discord,
            dict(_OPTIONS),
        )
    )
