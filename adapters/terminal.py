"""The terminal adapter: one turn (``teamrag ask``) or a conversation (``teamrag chat``).

Like the Slack and Discord adapters, it only translates: a line typed here
becomes a :class:`Turn`; Progress events become a live status line, Token
events the answer as it is written, and the Final its sources.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import replace

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown

from adapters.console import final_json, render_final
from agent.events import Event, Final, Progress, Token, Turn

RunTurn = Callable[[Turn], AsyncIterator[Event]]

_EXIT = {"/quit", "/exit", ":q", "/q"}
_HELP = "Type a question in Korean or English. /new starts a new thread, /quit leaves (or Ctrl-D)."


def new_thread_id() -> str:
    return uuid.uuid4().hex[:12]


async def run_turn(
    run: RunTurn, turn: Turn, out: Console, err: Console, *, as_json: bool = False
) -> Final:
    """Show one turn: progress lines on stderr (also with --json), then the answer.

    In a terminal the answer is shown as it is written, in a live area that is cleared at
    the end; the answer is then printed from the Final, which is authoritative (a
    rewritten draft or a fallback replaces what was streamed).
    """
    final: Final | None = None
    live: Live | None = None
    streamed = ""
    try:
        async for event in run(turn):
            if isinstance(event, Progress):
                line = f"[dim]· {event.text}[/dim]"
                # While the live area is up, print above it on the same console.
                (live.console if live else err).print(line, highlight=False, soft_wrap=True)
            elif isinstance(event, Token) and not as_json and out.is_terminal:
                streamed = event.text if event.reset else streamed + event.text
                if live is None:
                    live = Live(console=out, transient=True, refresh_per_second=8)
                    live.start()
                live.update(Markdown(streamed))
            elif isinstance(event, Final):
                final = event
    finally:
        if live is not None:
            live.stop()
    assert final is not None
    if as_json:
        print(final_json(final))
    else:
        # The Final's answer is authoritative: a rewritten or fallback answer replaces the draft.
        out.print(Markdown(final.answer))
        render_final(out, final, show_answer=False)
    return final


async def chat(run: RunTurn, base: Turn, out: Console, err: Console) -> None:
    """An interactive conversation in one thread until /quit or end of input."""
    turn = base
    out.print(f"[bold]teamrag[/bold] · thread {turn.thread_root} · {_HELP}", highlight=False)
    while True:
        try:
            line = await asyncio.to_thread(out.input, "[bold cyan]> [/bold cyan]")
        except (EOFError, KeyboardInterrupt):
            out.print()
            return
        text = line.strip()
        if not text:
            continue
        if text in _EXIT:
            return
        if text == "/new":
            turn = replace(turn, thread_root=new_thread_id())
            out.print(f"[dim]new thread {turn.thread_root}[/dim]")
            continue
        await run_turn(run, replace(turn, text=text), out, err)
        out.print()
