"""Slack's message markup, both ways.

Incoming text is Slack markup: ``<@U123>`` mentions, ``<#C1|name>`` channel links,
``<https://x|label>`` links, ``<!here>`` and ``&amp; &lt; &gt;`` escapes. The agent
wants the words a person would read, so :func:`plain_question` turns the markup back
into them and drops the mention that addressed the bot.

Outgoing ``mrkdwn`` (context blocks, the notification text) gives ``<``, ``>`` and
``&`` a meaning: an answer or a document title containing ``<!channel>`` would ping
the whole channel. :func:`escape` makes such text literal.
"""

from __future__ import annotations

import html
import re

_MARKUP = re.compile(r"<([^<>]*)>")


def escape(text: str) -> str:
    """Text shown literally in mrkdwn: only ``&``, ``<`` and ``>`` need escaping."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mentions(text: str, user_id: str) -> bool:
    """Whether ``text`` mentions ``user_id`` (``<@U123>`` or ``<@U123|name>``)."""
    return bool(user_id) and re.search(rf"<@{re.escape(user_id)}(?:\|[^>]*)?>", text) is not None


def mentions_someone_else(text: str, bot_user_id: str) -> bool:
    """A user mention other than the bot: the message is addressed to that person."""
    return any(m != bot_user_id for m in re.findall(r"<@([A-Z0-9]+)(?:\|[^>]*)?>", text))


def plain_question(text: str, bot_user_id: str) -> str:
    """The question as the user meant it: markup turned back into words, the bot's mention gone."""
    if bot_user_id:
        text = re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", " ", text)
    text = _MARKUP.sub(lambda m: _readable(m.group(1)), text)
    text = html.unescape(text) if "&" in text else text
    return re.sub(r"[ \t]+", " ", text).strip()


def _readable(inner: str) -> str:
    target, _, label = inner.partition("|")
    if target.startswith("@"):  # a user
        return f"@{label or target[1:]}"
    if target.startswith("#"):  # a channel
        return f"#{label or target[1:]}"
    if target.startswith("!"):  # <!here>, <!channel>, <!subteam^S1|@team>, <!date^...|text>
        if label:
            return label
        return "@" + target[1:].split("^", 1)[0]
    if target.startswith("mailto:"):
        return label or target.removeprefix("mailto:")
    if label and label != target:
        return f"{label} ({target})"
    return target
