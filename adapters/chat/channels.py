"""Per-channel rules: where the bot answers, which documents a channel may search,
and whether replies in a thread need a mention.

Rules come from a TOML file (``TEAMRAG_CHANNELS_FILE``); a channel without a
section takes ``[defaults]``::

    [defaults]
    follow_ups = true            # answer replies in a bot thread without a mention

    [channels.C0123ABCD]         # a Slack channel id, or a Discord channel id
    scopes = ["engineering", "public"]
    follow_ups = false

    [channels."987654321098765432"]
    answer = false               # never answer here (say why instead)
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent.retrieval.ingest import validate_scope


class ChannelRule(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    answer: bool = Field(True, description="Answer in this channel at all.")
    follow_ups: bool = Field(True, description="Answer thread replies that do not mention the bot.")
    scopes: frozenset[str] | None = Field(
        None, description="Document scopes this channel may search; unset = the default scope."
    )

    @field_validator("scopes")
    @classmethod
    def _valid_scopes(cls, scopes: frozenset[str] | None) -> frozenset[str] | None:
        return None if scopes is None else frozenset(validate_scope(s) for s in scopes)


class ChannelRules(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    defaults: ChannelRule = ChannelRule()
    channels: dict[str, ChannelRule] = Field(default_factory=dict)

    def for_channel(self, channel: str, *, parent: str | None = None) -> ChannelRule:
        """The rule of ``channel``; a Discord thread falls back to its parent channel's."""
        if channel in self.channels:
            return self.channels[channel]
        if parent is not None and parent in self.channels:
            return self.channels[parent]
        return self.defaults


class ChannelRulesError(Exception):
    """The channels file cannot be used; the message names the file and the problem."""


def load_channel_rules(path: Path | None) -> ChannelRules:
    if path is None:
        return ChannelRules()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return ChannelRules.model_validate(data)
    except OSError as exc:
        raise ChannelRulesError(
            f"TEAMRAG_CHANNELS_FILE {path} cannot be read: {exc.strerror}; fix the path or "
            "unset it to answer everywhere with the default scope"
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ChannelRulesError(f"TEAMRAG_CHANNELS_FILE {path} is not valid TOML: {exc}") from None
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ChannelRulesError(f"TEAMRAG_CHANNELS_FILE {path}: {problems}") from None
