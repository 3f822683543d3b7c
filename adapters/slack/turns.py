"""Which Slack messages are addressed to the bot, and the Turn each one becomes.

Three kinds of message reach the bot:

- an ``app_mention`` (``@teamrag ...`` in a channel, or in a thread);
- a ``message`` in a direct message with the bot: every one is for the bot;
- a ``message`` replying in a thread the bot takes part in, without a mention
  (a follow-up; a channel rule can switch these off).

A channel message that mentions the bot arrives twice, as ``app_mention`` and as
``message``: the message listener leaves those to the mention listener. Edits,
deletions, joins and other subtypes are not questions, and the bot never answers
itself or another bot (two bots answering each other would never stop).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from adapters.chat.channels import ChannelRule, under_rule
from adapters.slack.markup import mentions, mentions_someone_else, plain_question
from agent.events import Turn

PLATFORM = "slack"
# Subtypes that are still a person writing: a message with a file, a thread reply also
# sent to the channel. Everything else (message_changed, message_deleted, bot_message,
# channel_join ...) is not a question.
_PERSON_SUBTYPES = frozenset({"file_share", "thread_broadcast"})

Addressed = Literal["mention", "direct", "follow_up"]
_PRIVATE_FLAGS = frozenset({"-p", "--private", "private", "비공개"})


@dataclass(frozen=True)
class Incoming:
    """A message event, reduced to what answering it needs."""

    team: str  # the workspace the app is installed in
    user_team: str  # the asker's own workspace (differs in shared channels)
    channel: str
    channel_type: str  # channel, group, im, mpim ('' for app_mention)
    user: str
    text: str  # raw Slack markup
    ts: str
    thread_ts: str | None
    event_id: str
    client_msg_id: str | None = None
    # The conversation (thread root) the agent keeps its history under, when not the
    # answer's own thread: a DM message continuing an earlier answer (adapters.slack.dm).
    conversation: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """As queued (JSON), for :meth:`from_dict` on whichever worker answers."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Incoming:
        return cls(**data)

    @property
    def thread_root(self) -> str:
        """The thread the answer goes in: the message's own thread, or a new one under it."""
        return self.thread_ts or self.ts

    @property
    def message_key(self) -> str:
        """The same for every delivery of this message, whichever event carries it."""
        return f"slack:{self.team}:{self.channel}:{self.client_msg_id or self.ts}"

    @property
    def thread_key(self) -> str:
        return thread_key(self.team, self.channel, self.thread_root)

    def question(self, bot_user_id: str) -> str:
        return plain_question(self.text, bot_user_id)

    def turn(self, question: str, rule: ChannelRule | None = None) -> Turn:
        """The question as a turn, under ``rule`` (the rule of the channel that rules it:
        the viewed one in the assistant pane); None only to name its thread."""
        turn = Turn(
            text=question,
            platform=PLATFORM,
            workspace=self.team,
            channel=self.channel,
            thread_root=self.conversation or self.thread_root,
            user=self.user,
            message_id=self.client_msg_id or self.ts,
        )
        return turn if rule is None else under_rule(turn, rule)


def thread_key(team: str, channel: str, thread_root: str) -> str:
    return f"{team}:{channel}:{thread_root}"


def incoming(body: dict[str, Any]) -> Incoming:
    """The message of an ``event_callback`` body (``app_mention`` or ``message``)."""
    event: dict[str, Any] = body["event"]
    team = str(body.get("team_id") or event.get("team") or "")
    return Incoming(
        team=team,
        user_team=str(event.get("user_team") or event.get("team") or team),
        channel=str(event.get("channel", "")),
        channel_type=str(event.get("channel_type", "")),
        user=str(event.get("user", "")),
        text=str(event.get("text") or ""),
        ts=str(event.get("ts", "")),
        thread_ts=event.get("thread_ts") or None,
        event_id=str(body.get("event_id", "")),
        client_msg_id=event.get("client_msg_id") or None,
    )


def not_from_a_person(event: dict[str, Any], bot_user_id: str) -> str | None:
    """Why this event is not a person's new message (None when it is one)."""
    subtype = event.get("subtype")
    if subtype is not None and subtype not in _PERSON_SUBTYPES:
        return f"subtype {subtype}"
    if event.get("bot_id") or event.get("bot_profile"):
        return "a bot wrote it"
    user = event.get("user")
    if not user:
        return "no user"
    if user == bot_user_id:
        return "the bot wrote it"
    return None


def addressed_message(event: dict[str, Any], bot_user_id: str) -> Addressed | None:
    """How a ``message`` event (not an ``app_mention``) may be addressed to the bot.

    "follow_up" is a reply in some thread that mentions nobody else: the caller answers
    it only when the bot takes part in that thread and the channel wants follow-ups.
    """
    if not_from_a_person(event, bot_user_id) is not None:
        return None
    channel = str(event.get("channel", ""))
    if event.get("channel_type") == "im" or channel.startswith("D"):
        return "direct"
    text = str(event.get("text") or "")
    if mentions(text, bot_user_id):
        return None  # the app_mention event for this message answers it
    if event.get("thread_ts") and not mentions_someone_else(text, bot_user_id):
        return "follow_up"
    return None


def ask_options(text: str) -> tuple[bool, str]:
    """``/ask`` text -> (private, question). A leading ``-p``, ``--private``, ``private``
    or ``비공개`` asks for an answer only the asker sees."""
    parts = text.split(maxsplit=1)
    if parts and parts[0].lower() in _PRIVATE_FLAGS:
        return True, parts[1].strip() if len(parts) > 1 else ""
    return False, text.strip()
