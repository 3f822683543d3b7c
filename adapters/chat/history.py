"""What the Slack and Discord history sources share: which scope a channel's history
goes into, and the scan that refetches everything when that scope moves.

A channel's history is answerable only where the channel's own messages could be read:

- ``--scope`` given when the source was added: that scope, as the admin chose;
- a private channel: a scope only this channel's rule names (one no other channel and
  not ``[defaults]`` names), else a scope of its own, ``slack-<channel id>`` or
  ``discord-<channel id>``, which only a rule naming it can search;
- a public channel: the one scope its rule names (several: ``--scope`` must pick one),
  or the default scope.

The scope is worked out at every sync, so a change of the channel rules moves the
history to its new scope at the next sync (every document is loaded again then).
"""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime

from adapters.chat.channels import ChannelRules
from agent.sources.base import Checkpoint, Item, KindContext, SourceError
from agent.sources.listed import ListedSource


def own_scope(platform: str, channel: str) -> str:
    """The scope of a private channel's history that no rule names: ``slack-c0123``."""
    return f"{platform}-{channel.lower()}"


def history_scope(
    rules: ChannelRules, platform: str, channel: str, *, private: bool, default_scope: str
) -> str:
    rule = rules.channels.get(channel)
    named = set(rule.scopes or ()) if rule is not None else set()
    if private:
        # A scope another channel (or every channel, through [defaults]) may search would
        # let that channel cite this one's private messages.
        shared = set(rules.defaults.scopes or {default_scope})
        for other, other_rule in rules.channels.items():
            if other != channel:
                shared |= set(other_rule.scopes or {default_scope})
        mine = sorted(named - shared)
        return mine[0] if mine else own_scope(platform, channel)
    scopes = sorted(named or rules.defaults.scopes or {default_scope})
    if len(scopes) > 1:
        raise SourceError(
            f"channel {channel} may search several scopes ({', '.join(scopes)}): pass --scope "
            "once when adding the source to choose the one its history goes into"
        )
    return scopes[0]


def day_of(seconds: float) -> str:
    """The UTC day a message belongs to: unthreaded messages are grouped by it."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d")


def clock_of(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M UTC")


def version_of(parts: Iterable[str]) -> str:
    """A version that moves when any of ``parts`` (ids, edit times, texts) does."""
    return hashlib.sha1("\n".join(parts).encode("utf-8")).hexdigest()[:16]


class ChannelHistory(ListedSource):
    """A channel's threads and days as listed documents, in the scope of :meth:`resolve`.

    The scope goes into the checkpoint beside the versions; a checkpoint made for another
    scope is not trusted (every document is fetched again, so the Ingestor moves each one
    to the new scope)."""

    scope = ""

    @abstractmethod
    def resolve(self) -> str:
        """Look the channel up (and check the token): the scope its history goes into."""

    @staticmethod
    def bot_token(ctx: KindContext, env: str, what: str) -> str:
        """The bot token in ``env`` (the platform's usual variable, or ``--token-env``'s);
        a missing one names the variable and the fix."""
        token = ctx.env.get(env, "")
        if not token:
            raise SourceError(
                f"{env} is not set: export the {what} where the sync runs, or pass "
                "--token-env NAME to use another variable"
            )
        return token

    def load_all(self) -> Iterator[Item]:
        return self._scan_in_scope({})

    def changed_since(self, checkpoint: Checkpoint) -> Iterator[Item]:
        return self._scan_in_scope(checkpoint)

    def checkpoint(self) -> Checkpoint:
        return {**super().checkpoint(), "scope": self.scope}

    def _scan_in_scope(self, checkpoint: Checkpoint) -> Iterator[Item]:
        self.scope = self.spec.option("scope") or self.resolve()
        same = checkpoint.get("scope") == self.scope
        yield from self._scan(dict(checkpoint.get("versions", {})) if same else {})
