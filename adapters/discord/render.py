"""Progress, answers and sources as Discord messages, inside Discord's limits.

Discord refuses (400) rather than truncates a message over its limits: 2,000
characters of content, 4,096 per embed description, 10 embeds and 6,000 embed
characters per message. So the answer is split losslessly into as many messages as
it needs (:func:`~adapters.chat.split.split_text`, code fences kept valid), the
sources become embeds packed into the last message while they fit, and whatever
does not fit goes into further messages: nothing is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePath

import discord

from adapters.chat.live import LiveView
from adapters.chat.phrases import language_of, phrase, sources_heading
from adapters.chat.split import split_text
from agent.events import Citation, Final

CONTENT_LIMIT = 2000
DESCRIPTION_LIMIT = 4096
EMBEDS_PER_MESSAGE = 10
EMBED_CHARS_PER_MESSAGE = 6000
THREAD_NAME_LIMIT = 100
# A source is one line of an embed; a title longer than this is a broken document title.
SOURCE_LINE_LIMIT = 1000
# A progress message shows the latest steps; older ones are done and not worth the space.
PROGRESS_STEPS = 8

SOURCES_COLOUR = discord.Colour.blurple()


@dataclass(frozen=True)
class Outgoing:
    """One Discord message to post: content (at most 2,000 characters) and embeds."""

    content: str = ""
    embeds: tuple[discord.Embed, ...] = ()

    @property
    def embed_chars(self) -> int:
        return sum(len(e) for e in self.embeds)


def progress_text(view: LiveView, language: str) -> str:
    """The steps so far (done ones ticked) and the tail of the streamed answer."""
    lines = []
    for step in view.steps[-PROGRESS_STEPS:]:
        if step.status == "complete":
            lines.append(f"✅ {step.text.rstrip('…. ')}")
        else:
            lines.append(f"⏳ {step.text}")
    head = "\n".join(lines) or f"⏳ {phrase('thinking', language)}"
    head = head[: CONTENT_LIMIT // 2]  # eight short sentences; a guard, not a real cut
    text = view.text.strip()
    if not text:
        return head
    room = CONTENT_LIMIT - len(head) - 3  # "\n\n" and the leading "…"
    if len(text) > room:
        # Only a preview: the final answer replaces it and is split without loss.
        text = "…" + text[-room:]
    return f"{head}\n\n{text}"


def final_messages(final: Final) -> list[Outgoing]:
    """The answer split over as many messages as needed, then the sources as embeds."""
    answer = final.answer.strip() or phrase("turn_failed", final.language)
    contents = split_text(answer, CONTENT_LIMIT)
    embeds = source_embeds(final.sources, sources_heading(final))
    return pack([Outgoing(c) for c in contents], embeds)


def plain_messages(final: Final) -> list[Outgoing]:
    """The answer and its sources as plain text only, for when Discord refused the rich
    form: a reason first, then everything, still split within the content limit."""
    parts = [phrase("delivery_failed", final.language), final.answer.strip()]
    if final.sources:
        parts.append(
            sources_heading(final)
            + "\n"
            + "\n".join(source_line(s, markdown=False) for s in final.sources)
        )
    return [Outgoing(c) for c in split_text("\n\n".join(p for p in parts if p), CONTENT_LIMIT)]


def pack(messages: list[Outgoing], embeds: list[discord.Embed]) -> list[Outgoing]:
    """Attach ``embeds`` to the last message while Discord's per-message limits allow,
    then start new content-less messages for the rest."""
    packed = list(messages) or [Outgoing()]
    for embed in embeds:
        last = packed[-1]
        if (
            len(last.embeds) < EMBEDS_PER_MESSAGE
            and last.embed_chars + len(embed) <= EMBED_CHARS_PER_MESSAGE
        ):
            packed[-1] = Outgoing(last.content, (*last.embeds, embed))
        else:
            packed.append(Outgoing("", (embed,)))
    return packed


def source_embeds(sources: list[Citation], title: str) -> list[discord.Embed]:
    """The numbered sources, one line each, in as many embeds as 4,096 characters allow."""
    if not sources:
        return []
    descriptions: list[str] = []
    for line in (source_line(s) for s in sources):
        if descriptions and len(descriptions[-1]) + 1 + len(line) <= DESCRIPTION_LIMIT:
            descriptions[-1] += "\n" + line
        else:
            descriptions.append(line)
    return [
        discord.Embed(
            title=title if len(descriptions) == 1 else f"{title} ({i}/{len(descriptions)})",
            description=description,
            colour=SOURCES_COLOUR,
        )
        for i, description in enumerate(descriptions, 1)
    ]


def source_line(source: Citation, *, markdown: bool = True) -> str:
    """``[1] Title · p. 3 · file.pdf``, the title linked when the source has a web link."""
    title = source.title.strip() or _file_name(source.source) or f"#{source.number}"
    parts = []
    link = source.link if source.link and source.link.startswith(("https://", "http://")) else None
    if markdown:
        title = discord.utils.escape_markdown(title)
        parts.append(f"**[{source.number}]** " + (f"[{title}](<{link}>)" if link else title))
    else:
        parts.append(f"[{source.number}] {title}" + (f" <{link}>" if link else ""))
    if source.locator:
        parts.append(discord.utils.escape_markdown(source.locator) if markdown else source.locator)
    name = _file_name(source.source)
    if not link and name and name != source.title:
        parts.append(f"`{name}`" if markdown else name)
    line = " · ".join(parts)
    return line if len(line) <= SOURCE_LINE_LIMIT else line[: SOURCE_LINE_LIMIT - 1] + "…"


def thread_name(question: str) -> str:
    """A thread name from the question: its first line, 1 to 100 characters."""
    first = next((line for line in question.splitlines() if line.strip()), "")
    name = re.sub(r"\s+", " ", first).strip()
    if len(name) > THREAD_NAME_LIMIT:
        name = name[: THREAD_NAME_LIMIT - 1].rstrip() + "…"
    return name or "?"


def _file_name(source: str) -> str:
    if not source or "://" in source:
        return ""
    return PurePath(source).name


def language_for(text: str, locale: discord.Locale | None = None) -> str:
    """The language of a question, or the user's Discord language when there is no text."""
    if text.strip():
        return language_of(text)
    return "ko" if locale == discord.Locale.korean else "en"
