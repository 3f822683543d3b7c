"""What the user sees: the live progress message and the final answer, as Block Kit.

The answer is standard Markdown, so it goes in ``markdown`` blocks (Slack renders
them as Markdown; ``mrkdwn`` is a different dialect). Sources and the notification
text are ``mrkdwn``, with every title escaped. Slack rejects a message with more
than 50 blocks, more than 12,000 characters of ``markdown`` blocks, or (in practice)
more than about 13,200 characters of text in its blocks; a long answer is therefore
cut into several messages (:func:`~adapters.chat.split.split_text`, which loses
nothing and keeps code fences valid), with the sources and the feedback buttons on
the last one.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from slack_sdk.models.blocks import (
    ContextActionsBlock,
    ContextBlock,
    FeedbackButtonObject,
    FeedbackButtonsElement,
    MarkdownBlock,
    MarkdownTextObject,
)

from adapters.chat.live import LiveView
from adapters.chat.phrases import phrase, sources_heading
from adapters.chat.split import split_text
from adapters.paths import shown_path
from adapters.slack.markup import escape
from agent.events import Citation, Final

Block = dict[str, Any]

MAX_BLOCKS = 50
MARKDOWN_TOTAL = 12_000  # all markdown blocks of one message together
BLOCK_TEXT_TOTAL = 13_200  # all text in one message's blocks, in practice
ANSWER_PIECE = 10_000  # answer characters per message: leaves room for sources and buttons
SOURCES_PIECE = 2_000  # source lines per context block (Slack takes 3,000 per text)
PLAIN_PIECE = 3_500  # a plain-text fallback message (Slack advises under 4,000)
LIVE_STEPS = 10  # progress lines kept in the live message
FEEDBACK_ACTION = "teamrag_feedback"
_STEP_ICON = {"in_progress": ":hourglass_flowing_sand:", "complete": ":white_check_mark:"}


@dataclass(frozen=True)
class SlackMessage:
    """One message of an answer.

    ``markdown`` is this message's piece of the answer ('' for a message of sources
    only); ``head`` blocks come before it (the question of an ``/ask``), ``tail``
    blocks after it (the continued note, the sources, the feedback buttons). A native
    stream carries ``markdown`` as its text and ``tail`` as its closing blocks.
    ``plain`` says the same without blocks, for the fallback when blocks fail.
    """

    text: str
    markdown: str
    plain: str
    head: tuple[Block, ...] = ()
    tail: tuple[Block, ...] = ()

    @property
    def blocks(self) -> list[Block]:
        body = [markdown_block(self.markdown)] if self.markdown else []
        return [*self.head, *body, *self.tail]


def markdown_block(text: str) -> Block:
    return MarkdownBlock(text=text).to_dict()


def context_block(mrkdwn: str) -> Block:
    return ContextBlock(elements=[MarkdownTextObject(text=mrkdwn)]).to_dict()


def feedback_block(answer_id: str, language: str) -> Block:
    """Thumbs up and down; the click's value names the answer (``up:<id>``) and the
    block id carries the answer's language, for the thanks."""
    return ContextActionsBlock(
        block_id=f"{FEEDBACK_ACTION}:{language}",
        elements=[
            FeedbackButtonsElement(
                action_id=FEEDBACK_ACTION,
                positive_button=FeedbackButtonObject(text="👍", value=f"up:{answer_id}"),
                negative_button=FeedbackButtonObject(text="👎", value=f"down:{answer_id}"),
            )
        ],
    ).to_dict()


def question_block(user: str, question: str) -> Block:
    """The asker and the question, above an ``/ask`` answer (the command itself is not shown)."""
    shown = question if len(question) <= 300 else question[:299] + "…"
    return context_block(f"<@{user}>: {escape(shown)}")


# --- sizes ----------------------------------------------------------------------------


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "text" and isinstance(item, str):
                yield item
            else:
                yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def block_text_chars(blocks: Sequence[Block]) -> int:
    return sum(len(t) for t in _texts(list(blocks)))


def markdown_chars(blocks: Sequence[Block]) -> int:
    return sum(len(b["text"]) for b in blocks if b.get("type") == "markdown")


def fits(blocks: Sequence[Block]) -> bool:
    """Whether Slack accepts these blocks as one message."""
    return (
        len(blocks) <= MAX_BLOCKS
        and markdown_chars(blocks) <= MARKDOWN_TOTAL
        and block_text_chars(blocks) <= BLOCK_TEXT_TOTAL
    )


# --- the final answer -----------------------------------------------------------------


def source_line(source: Citation, *, mrkdwn: bool = True) -> str:
    title = _clip(source.title or shown_path(source.source) or "?", 150)
    locator = _clip(source.locator, 150)
    link = source.link if source.link and len(source.link) <= 500 else None
    if not mrkdwn:
        parts = [f"[{source.number}] {title}", locator, link or ""]
        return " · ".join(p for p in parts if p)
    shown = escape(title)
    if link:
        target = link.replace("|", "%7C").replace("<", "%3C").replace(">", "%3E")
        shown = f"<{target}|{shown}>"
    return f"[{source.number}] {shown}" + (f" · {escape(locator)}" if locator else "")


def sources_blocks(sources: Sequence[Citation], heading: str) -> list[Block]:
    if not sources:
        return []
    text = "\n".join([f"*{escape(heading)}*", *(source_line(s) for s in sources)])
    return [context_block(piece) for piece in split_text(text, SOURCES_PIECE)]


def sources_plain(sources: Sequence[Citation], heading: str) -> str:
    if not sources:
        return ""
    lines = [heading, *(source_line(s, mrkdwn=False) for s in sources)]
    return "\n".join(lines)


def final_messages(
    final: Final,
    *,
    answer_id: str | None,
    head: Sequence[Block] = (),
) -> list[SlackMessage]:
    """The answer as messages Slack accepts, in order; sources and buttons on the last."""
    language = final.language
    answer = final.answer.strip() or "…"
    messages = [
        SlackMessage(text=escape(piece), markdown=piece, plain=piece)
        for piece in split_text(answer, ANSWER_PIECE)
    ]
    messages[0] = replace(messages[0], head=tuple(head))
    heading = sources_heading(final)
    trailer = sources_blocks(final.sources, heading)
    if answer_id is not None:
        trailer.append(feedback_block(answer_id, language))
    plain_sources = sources_plain(final.sources, heading)
    last = messages[-1]
    if fits([*last.blocks, *trailer]):
        messages[-1] = replace(
            last,
            tail=tuple(trailer),
            plain="\n\n".join(p for p in (last.plain, plain_sources) if p),
        )
    elif trailer:
        messages += _trailer_messages(trailer, plain_sources, heading)
    note = context_block(f"_{phrase('continued', language)}_")
    return [replace(m, tail=(*m.tail, note)) for m in messages[:-1]] + [messages[-1]]


def _trailer_messages(trailer: list[Block], plain: str, heading: str) -> list[SlackMessage]:
    """Sources too long to share the last piece's message: messages of their own."""
    groups: list[list[Block]] = [[]]
    for block in trailer:
        # One block of room for the continued note on every message but the last.
        if groups[-1] and not fits([*groups[-1], block, context_block("_" * 40)]):
            groups.append([])
        groups[-1].append(block)
    text = escape(heading)
    return [
        SlackMessage(text=text, markdown="", plain=plain if i == 0 else "", tail=tuple(g))
        for i, g in enumerate(groups)
    ]


def plain_texts(messages: Sequence[SlackMessage], language: str) -> list[str]:
    """``messages`` said without blocks, prefixed by why: the fallback when blocks fail."""
    body = "\n\n".join(m.plain for m in messages if m.plain)
    text = f"{phrase('delivery_failed', language)}\n\n{body}"
    return [escape(piece) for piece in split_text(text, PLAIN_PIECE)]


# --- the live message -----------------------------------------------------------------


def progress_message(view: LiveView, language: str, head: Sequence[Block] = ()) -> SlackMessage:
    """The steps so far (the current one last) and the answer text streamed so far."""
    if view.steps:
        steps = view.steps[-LIVE_STEPS:]
        lines = "\n".join(f"{_STEP_ICON[s.status]} {escape(s.text)}" for s in steps)
        text = escape(steps[-1].text)
    else:
        lines = text = escape(phrase("thinking", language))
    markdown = view.text.strip()
    if len(markdown) > ANSWER_PIECE:  # the final answer will be split; live shows the start
        markdown = markdown[: ANSWER_PIECE - 1] + "…"
    return SlackMessage(text=text, markdown=markdown, plain="", head=(*head, context_block(lines)))


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
