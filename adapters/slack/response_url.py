"""An ``/ask`` answered through its ``response_url``: ephemeral answers, or a channel the bot
is not in.

Slack allows five uses of a response URL, and what it sends cannot be edited by id or
deleted afterwards: a message may only replace the one the URL showed last
(``replace_original``). So :class:`ResponseReply` spends up to three uses on progress
updates, each replacing the last, then sends the answer in their place.

A worker that takes such a turn over from a dead one cannot repair the messages the
dead worker sent, but it need not repeat them either. Each use is noted with the queued
turn (:class:`UrlNotes`: the uses spent, and a digest of each answer message shown), so
the survivor knows how many uses are left, shows no progress over an answer already on
screen, skips the answer's messages the asker already sees word for word (usually all
of them that were sent: the dead worker's answer is in the answer cache), and replaces
the last one shown when its own differs from it.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.webhook.async_client import AsyncWebhookClient
from slack_sdk.webhook.webhook_response import WebhookResponse

from adapters.chat.live import LiveView
from adapters.slack.delivery import Render
from adapters.slack.render import SlackMessage, plain_texts, progress_message
from agent.events import Final

log = logging.getLogger(__name__)

RESPONSE_URL_USES = 5  # Slack allows five uses of a response_url, within 30 minutes
# Progress updates through a response URL (of its five uses; the answer keeps two).
PROGRESS_UPDATES = 3
# The notes a queued /ask carries about its response URL (adapters.chat.queue: TurnQueue.note).
URL_USES = "url_uses"
URL_SHOWN = "url_shown"

Note = Callable[..., Awaitable[None]]


async def _no_note(**fields: str) -> None:
    return None


def digest(message: SlackMessage) -> str:
    """A short fingerprint of what an answer message says (its buttons aside)."""
    said = f"{message.markdown}\x00{message.plain}".encode()
    return hashlib.sha256(said).hexdigest()[:16]


@dataclass
class UrlNotes:
    """What a reply through a response URL noted with its queued turn: the uses spent and
    the answer messages shown (their digests, in order); :meth:`of` reads a dead worker's."""

    spent: int = 0
    shown: list[str] = field(default_factory=list)
    note: Note = _no_note

    @classmethod
    def of(cls, notes: Mapping[str, str], note: Note = _no_note) -> UrlNotes:
        try:
            spent = max(0, int(notes.get(URL_USES) or 0))
        except ValueError:
            spent = 0
        shown = [d for d in (notes.get(URL_SHOWN) or "").split(",") if d]
        return cls(spent, shown, note)

    async def used(self) -> None:
        self.spent += 1
        await self.note(**{URL_USES: str(self.spent)})

    async def showing(self, shown: list[str]) -> None:
        self.shown = shown
        await self.note(**{URL_SHOWN: ",".join(shown)})


class ResponseUrl:
    """A slash command's ``response_url`` (the only way to an ephemeral message that
    carries blocks), counting its uses: past Slack's five it refuses here rather than
    spend a request Slack would refuse anyway. ``notes``: the uses a dead worker spent
    already, and where this one notes its own."""

    def __init__(
        self,
        url: str,
        retry_handlers: list[AsyncRetryHandler],
        notes: UrlNotes | None = None,
    ) -> None:
        self._webhook = AsyncWebhookClient(url, retry_handlers=retry_handlers)
        self.notes = notes or UrlNotes()

    @property
    def left(self) -> int:
        return RESPONSE_URL_USES - self.notes.spent

    async def send(self, **fields: Any) -> WebhookResponse:
        if self.left <= 0:
            raise RuntimeError("the response_url's five uses are spent")
        await self.notes.used()  # before: a use sent and not noted would be one too many
        return await self._webhook.send(**fields)


async def respond_all(
    url: ResponseUrl,
    messages: Sequence[SlackMessage],
    language: str,
    *,
    response_type: str,
    replace_first: bool = False,
) -> None:
    """The answer's ``messages`` through a slash command's response URL. ``replace_first``:
    the first message replaces the one the URL showed last (the progress, or "Thinking…").

    The messages the URL already shows (a dead worker sent them) are not sent again; when
    the answer differs from what is shown, its first different message replaces the
    last one shown. One use is kept for the plain fallback while more than one message is
    left; on the URL's last use the rest of a long answer goes as one plain message."""
    shown = list(url.notes.shown)
    digests = [digest(m) for m in messages]
    same = 0
    while same < min(len(shown), len(messages)) and digests[same] == shown[same]:
        same += 1
    if shown:
        log.info("the asker sees %d of the answer's %d messages already", same, len(messages))
        replace_first = same < len(shown)  # the last one shown is not the answer's
    for i in range(same, len(messages)):
        rest = messages[i:]
        if url.left < 2 and len(rest) > 1:
            await _respond_plain(url, rest, language, response_type)
            return
        sent = await url.send(
            text=messages[i].text,
            blocks=messages[i].blocks,
            response_type=response_type,
            replace_original=replace_first and i == same,
        )
        if sent.status_code != 200:
            log.warning("response_url refused an answer (%s); sending it plainly", sent.body)
            await _respond_plain(url, rest, language, response_type)
            return
        await url.notes.showing(digests[: i + 1])


async def _respond_plain(
    url: ResponseUrl, messages: Sequence[SlackMessage], language: str, response_type: str
) -> None:
    plain = "".join(plain_texts(messages, language))
    sent = await url.send(text=plain, response_type=response_type)
    if sent.status_code != 200:
        raise RuntimeError(f"response_url refused the plain answer too: {sent.body}")


class ResponseReply:
    """An ``/ask`` answer through its response URL: a few progress updates, then the
    answer, within the URL's five uses.

    Each update replaces the message the URL showed before (``replace_original``): the
    acknowledgement's "Thinking…" of a private question, then the previous update. An
    update is spent only on a new step (the answer's text as it streams is not worth a
    use), and at most :data:`PROGRESS_UPDATES` of them, so that the answer always has
    two uses left: its first message and, should Slack refuse its blocks, the plain one.
    Over an answer a dead worker already showed, no progress is shown at all.
    """

    def __init__(
        self,
        url: ResponseUrl,
        render: Render,
        language: str,
        *,
        response_type: str,
        replaces: bool,
    ) -> None:
        """``replaces``: the URL already shows a message the next one may replace (the
        acknowledgement said "Thinking…", or a dead worker sent something)."""
        self._url = url
        self._render = render
        self._language = language
        self._response_type = response_type
        self._replaces = replaces or url.notes.spent > 0
        self._updates = 0
        self._shown = ""  # the step the last update showed

    async def show(self, view: LiveView) -> None:
        step = view.current
        if step is None or step.text == self._shown or self._updates >= PROGRESS_UPDATES:
            return
        if self._url.left <= 2 or self._url.notes.shown:
            return  # the uses left are the answer's; or the answer is on screen already
        self._updates += 1
        message = progress_message(view, self._language)
        sent = await self._url.send(
            text=message.text,
            blocks=message.blocks,
            response_type=self._response_type,
            replace_original=self._replaces,
        )
        if sent.status_code != 200:
            log.info("response_url refused a progress update (%s)", sent.body)
            return
        self._shown, self._replaces = step.text, True

    async def finish(self, final: Final) -> None:
        messages = await self._render(final)
        await respond_all(
            self._url,
            messages,
            final.language,
            response_type=self._response_type,
            replace_first=self._replaces,
        )
