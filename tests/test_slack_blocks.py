"""The Slack adapter's pure parts: markup both ways, which messages are for the bot, and the
answer as Block Kit within Slack's limits (the record of the bot's threads is in
test_slack_threads.py)."""

from __future__ import annotations

import pytest

from adapters.chat.live import LiveView, Step
from adapters.chat.split import split_pieces
from adapters.slack.markup import escape, plain_question
from adapters.slack.render import (
    ANSWER_PIECE,
    PLAIN_PIECE,
    final_messages,
    fits,
    plain_texts,
    progress_message,
    source_line,
)
from adapters.slack.turns import addressed_message, ask_options
from agent.events import Citation, Final
from tests.fakes.slack_limits import block_problems

BOT = "UBOT0001"


def test_incoming_markup_becomes_the_words_a_person_reads() -> None:
    text = (
        f"<@{BOT}> what does <https://wiki.example.com/x|this page> say about "
        "<#C0OPS|ops> &amp; <!here>? ask <@U0BOB> or <mailto:a@b.com|a@b.com> &lt;3"
    )
    assert plain_question(text, BOT) == (
        "what does this page (https://wiki.example.com/x) say about #ops & @here? "
        "ask @U0BOB or a@b.com <3"
    )
    assert plain_question(f"<@{BOT}|teamrag>   배포는 언제 하나요?", BOT) == "배포는 언제 하나요?"
    assert plain_question(f"<@{BOT}>", BOT) == ""


def test_outgoing_text_cannot_ping_or_link() -> None:
    assert escape("<!channel> & <https://x|y>") == "&lt;!channel&gt; &amp; &lt;https://x|y&gt;"
    linked = Citation(1, "Deploys <& rollbacks>", "d.md", "Rules > Windows", "https://w/a|b")
    assert source_line(linked) == (
        "[1] <https://w/a%7Cb|Deploys &lt;&amp; rollbacks&gt;> · Rules &gt; Windows"
    )
    assert source_line(Citation(2, "Handbook", "h.pdf", "p. 4")) == "[2] Handbook · p. 4"
    assert source_line(Citation(3, "", "notes.txt")) == "[3] notes.txt"
    assert source_line(linked, mrkdwn=False) == (
        "[1] Deploys <& rollbacks> · Rules > Windows · https://w/a|b"
    )


def _final(answer: str, sources: int = 2, language: str = "en") -> Final:
    return Final(
        answer=answer,
        language=language,
        sources=[
            Citation(
                n,
                f"Document {n} " + "긴 제목 " * 30,
                f"doc{n}.md",
                f"Section {n}",
                f"https://d/{n}",
            )
            for n in range(1, sources + 1)
        ],
    )


def test_a_short_answer_is_one_message_with_sources_and_buttons() -> None:
    (message,) = final_messages(_final("Deploy on **Tuesdays** [1]. <!channel>"), answer_id="a1")
    assert [b["type"] for b in message.blocks] == ["markdown", "context", "context_actions"]
    assert message.blocks[0]["text"] == "Deploy on **Tuesdays** [1]. <!channel>"  # Markdown as is
    assert message.text == "Deploy on **Tuesdays** [1]. &lt;!channel&gt;"  # the notification
    assert message.blocks[1]["elements"][0]["text"].startswith("*Sources*\n[1] <https://d/1|")
    buttons = message.blocks[2]["elements"][0]
    assert (buttons["positive_button"]["value"], buttons["negative_button"]["value"]) == (
        "up:a1",
        "down:a1",
    )
    assert message.blocks[2]["block_id"] == "teamrag_feedback:en"
    blocked = final_messages(_final("I cannot help with that.", sources=0), answer_id=None)
    assert [b["type"] for b in blocked[0].blocks] == ["markdown"]


@pytest.mark.parametrize(
    ("length", "sources"), [(9_000, 2), (11_500, 10), (25_000, 30), (60_000, 60), (3_000, 120)]
)
def test_any_answer_is_split_into_messages_slack_accepts_losing_nothing(
    length: int, sources: int
) -> None:
    unit = "배포는 화요일부터 목요일까지 가능합니다 [1]. Deploys need a green build.\n\n"
    answer = (unit * (length // len(unit) + 1))[:length]
    messages = final_messages(_final(answer, sources, "ko"), answer_id="abc")
    for message in messages:
        assert fits(message.blocks) and not block_problems(message.blocks), len(message.blocks)
        assert len(message.markdown) <= ANSWER_PIECE
    # The markdown pieces, in order, are exactly split_text's lossless pieces of the answer.
    pieces = split_pieces(answer.strip(), ANSWER_PIECE)
    assert [m.markdown for m in messages if m.markdown] == [str(p) for p in pieces]
    assert "".join(p.body for p in pieces) == answer.strip()
    texts = "\n".join(
        b["elements"][0]["text"] for m in messages for b in m.blocks if b["type"] == "context"
    )
    assert all(f"[{n}] <https://d/{n}|" in texts for n in range(1, sources + 1))  # every source
    assert messages[-1].blocks[-1]["type"] == "context_actions"
    assert sum(1 for m in messages for b in m.blocks if b["type"] == "context_actions") == 1
    assert all(m.blocks[-1]["elements"][0]["text"] == "_(계속)_" for m in messages[:-1])


def test_the_plain_fallback_says_why_and_keeps_answer_and_sources() -> None:
    messages = final_messages(_final("Use <b>staging</b> first [1].\n\n" * 400), answer_id="x")
    texts = plain_texts(messages, "en")
    assert texts[0].startswith("I had an answer but could not send it in full format")
    assert "Use &lt;b&gt;staging&lt;/b&gt; first [1]." in texts[0]
    assert "Sources\n[1] Document 1" in texts[-1] and "https://d/2" in texts[-1]
    assert all(len(t.replace("&lt;", "<").replace("&gt;", ">")) <= PLAIN_PIECE for t in texts)


def test_the_live_message_shows_recent_steps_and_the_text_so_far() -> None:
    steps = tuple(Step(f"s{i}", f"step {i} <x>", "complete") for i in range(12))
    view = LiveView((*steps, Step("write", "Writing…")), "x" * (ANSWER_PIECE + 50))
    live = progress_message(view, "en")
    lines = live.blocks[0]["elements"][0]["text"].splitlines()
    assert len(lines) == 10 and lines[-1] == ":hourglass_flowing_sand: Writing…"
    assert lines[0] == ":white_check_mark: step 3 &lt;x&gt;"
    assert live.text == "Writing…" and len(live.markdown) == ANSWER_PIECE
    assert not block_problems(live.blocks)
    idle = progress_message(LiveView(), "ko")
    assert idle.blocks[0]["elements"][0]["text"] == "생각하는 중…" and not idle.markdown


def test_ask_options() -> None:
    assert ask_options("-p how do I deploy?") == (True, "how do I deploy?")
    assert ask_options("--private  x") == (True, "x")
    assert ask_options("PRIVATE x") == (True, "x")
    assert ask_options("비공개\n배포는 언제?") == (True, "배포는 언제?")
    assert ask_options("-pq") == (False, "-pq")
    assert ask_options("private") == (True, "")
    assert ask_options("  ") == (False, "")


def _event(text: str, **extra: object) -> dict[str, object]:
    return {"type": "message", "channel": "C0GEN", "channel_type": "channel", "user": "U1",
            "text": text, "ts": "1.2"} | extra  # fmt: skip


def test_which_messages_are_for_the_bot() -> None:
    assert addressed_message(_event("hi", channel="D1", channel_type="im"), BOT) == "direct"
    assert addressed_message(_event("hi", thread_ts="1.1"), BOT) == "follow_up"
    assert (
        addressed_message(_event("hi", thread_ts="1.1", subtype="file_share"), BOT) == "follow_up"
    )
    not_for_it = [
        _event("hi"),  # a top-level channel message without a mention
        _event(f"<@{BOT}> hi"),  # the app_mention event answers this one
        _event("<@U0BOB> can you?", thread_ts="1.1"),  # addressed to someone else
        _event("hi", channel="D1", channel_type="im", subtype="message_changed"),
        _event("hi", channel="D1", channel_type="im", subtype="message_deleted"),
        _event("hi", channel="D1", channel_type="im", bot_id="B2"),
        _event("hi", channel="D1", channel_type="im", user=BOT),
        _event("hi", channel="D1", channel_type="im", user=""),
    ]
    assert [addressed_message(e, BOT) for e in not_for_it] == [None] * len(not_for_it)
