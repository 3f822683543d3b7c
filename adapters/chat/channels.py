"""Per-channel rules: where the bot answers, which documents a channel may search,
whether replies in a thread need a mention, and the persona line of its prompts.

Rules come from a TOML file (``TEAMRAG_CHANNELS_FILE``) or the same TOML inline
(``TEAMRAG_CHANNELS``, for a deployment without files). A channel without a
section takes ``[defaults]``; a channel's section changes only the fields it names
and takes the others from ``[defaults]``::

    [defaults]
    follow_ups = true            # answer replies in a bot thread without a mention

    [channels.C0123ABCD]         # a Slack channel id, or a Discord channel id
    scopes = ["engineering", "public"]
    follow_ups = false
    persona = "You are the platform team's on-call assistant. Be brief and precise."

    [channels."987654321098765432"]
    answer = false               # never answer here (say why instead)

    [channels.C0123ABCD.features]  # seed 003's feature flags for this channel's turns
    web_search = true
    hallucination_policy = "block"
"""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from agent.config import Features
from agent.events import Turn
from agent.retrieval.ingest import validate_scope

# A persona is one line that replaces the prompts' first line, not a second system prompt.
PERSONA_MAX_CHARS = 500


class ChannelRule(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    answer: bool = Field(True, description="Answer in this channel at all.")
    follow_ups: bool = Field(True, description="Answer thread replies that do not mention the bot.")
    scopes: frozenset[str] | None = Field(
        None, description="Document scopes this channel may search; unset = the default scope."
    )

    persona: str | None = Field(
        None, description="The persona line of this channel's prompts; unset = TEAMRAG_PERSONA."
    )
    features: dict[str, bool | str] = Field(
        default_factory=dict,
        description="Feature flags for this channel's turns (agent.config.Features names).",
    )

    @field_validator("features")
    @classmethod
    def _valid_features(cls, features: dict[str, bool | str]) -> dict[str, bool | str]:
        Features().overridden(features)  # FeatureError is a ValueError: pydantic reports it
        return features

    @field_validator("scopes")
    @classmethod
    def _valid_scopes(cls, scopes: frozenset[str] | None) -> frozenset[str] | None:
        return None if scopes is None else frozenset(validate_scope(s) for s in scopes)

    @field_validator("persona")
    @classmethod
    def _valid_persona(cls, persona: str | None) -> str | None:
        if persona is None:
            return None
        persona = persona.strip()
        if "\n" in persona or "\r" in persona:
            raise ValueError("must be a single line; join its sentences on one line")
        if len(persona) > PERSONA_MAX_CHARS:
            raise ValueError(
                f"is {len(persona)} characters; keep it under {PERSONA_MAX_CHARS} (one line)"
            )
        return persona or None


class ChannelRules(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    defaults: ChannelRule = ChannelRule()
    channels: dict[str, ChannelRule] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _inherit_defaults(cls, data: Any) -> Any:
        """Fill each channel's unnamed fields from ``[defaults]`` (a team that sets
        ``follow_ups = false`` once expects it in every channel)."""
        if not isinstance(data, dict):
            return data
        base, channels = data.get("defaults"), data.get("channels")
        if not isinstance(base, dict) or not isinstance(channels, dict):
            return data
        merged = {k: {**base, **v} if isinstance(v, dict) else v for k, v in channels.items()}
        return {**data, "channels": merged}

    def with_default_scope(self, scope: str) -> ChannelRules:
        """The rules with ``scope`` where a rule names no scopes: a channel without
        ``scopes`` searches the default scope only, never every scope (which would let it
        cite a private channel's history)."""

        def filled(rule: ChannelRule) -> ChannelRule:
            return rule if rule.scopes else rule.model_copy(update={"scopes": frozenset({scope})})

        return ChannelRules(
            defaults=filled(self.defaults),
            channels={k: filled(v) for k, v in self.channels.items()},
        )

    def for_channel(self, channel: str, *, parent: str | None = None) -> ChannelRule:
        """The rule of ``channel``; a Discord thread falls back to its parent channel's."""
        if channel in self.channels:
            return self.channels[channel]
        if parent is not None and parent in self.channels:
            return self.channels[parent]
        return self.defaults


def under_rule(turn: Turn, rule: ChannelRule) -> Turn:
    """The turn under its channel's whole rule: the scopes it may search, the persona line
    of its prompts and its feature flags under the turn's own (a request's override wins).

    Applied once, where an adapter builds the turn, with the rule of the channel that
    rules it (a Discord thread's parent, the channel the Slack assistant pane views):
    applied in halves, a thread got its parent's scopes but the defaults' features.
    """
    features = {**rule.features, **(turn.features or {})}
    return replace(turn, scopes=rule.scopes, persona=rule.persona or "", features=features or None)


class ChannelRulesError(Exception):
    """The channel rules cannot be used; the message names the setting and the problem."""


def load_channel_rules(
    path: Path | None, inline: str | None = None, *, default_scope: str = "public"
) -> ChannelRules:
    """The rules from the file at ``path`` or the inline TOML text (at most one of them),
    with every rule that names no scopes limited to ``default_scope``.

    Resolved here, once: the knowledge base reads "no scopes" as every scope, so a rule
    left at None would let a channel cite documents ingested for another team.
    """
    return _load(path, inline).with_default_scope(validate_scope(default_scope))


def _load(path: Path | None, inline: str | None) -> ChannelRules:
    if path is not None and inline:
        raise ChannelRulesError(
            "TEAMRAG_CHANNELS and TEAMRAG_CHANNELS_FILE are both set; keep one of them "
            "(they would otherwise disagree about which rules apply)"
        )
    if inline:
        return _parse(inline, "TEAMRAG_CHANNELS")
    if path is None:
        return ChannelRules()
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ChannelRulesError(
            f"TEAMRAG_CHANNELS_FILE {path} cannot be read: {exc.strerror}; fix the path or "
            "unset it to answer everywhere with the default scope"
        ) from None
    return _parse(text, f"TEAMRAG_CHANNELS_FILE {path}")


def _parse(text: str, origin: str) -> ChannelRules:
    try:
        return ChannelRules.model_validate(tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        raise ChannelRulesError(f"{origin} is not valid TOML: {exc}") from None
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()
        )
        raise ChannelRulesError(f"{origin}: {problems}") from None
