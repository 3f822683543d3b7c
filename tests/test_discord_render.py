"""Rendering within Discord's limits: answers split losslessly, sources packed into embeds
(4,096 per description, 10 and 6,000 characters per message), progress previews and
thread names that always fit."""

from __future__ import annotations

import discord

from adapters.chat.live import LiveView, Step
from adapters.discord.render import (
    final_messages,
    language_for,
    plain_messages,
    progress_text,
    source_line,
    thread_name,
)
from agent.events import Citation, Final

KOREAN = "배포는 화요일부터 목요일까지 10시에서 16시 사이에만 할 수 있습니다. "
CODE = "```python\n" + "\n".join(f"print('step {i}')  # 배포 단계" for i in range(150)) + "\n```"


def many_sources(count: int) -> list[Citation]:
    return [
        Citation(
            i,
            f"운영 핸드북 / Operations handbook, chapter {i} " + "x" * 150,
            f"/srv/docs/handbook-{i}.pdf",
            f"p. {i}",
            f"https://wiki.example.com/handbook/{i}" if i % 2 else None,
        )
        for i in range(1, count + 1)
    ]


def test_a_long_korean_answer_with_code_is_split_within_2000_and_keeps_fences() -> None:
    answer = KOREAN * 40 + "\n\n" + CODE + "\n\n" + KOREAN * 20
    messages = final_messages(Final(answer.strip(), language="ko"))
    assert len(messages) >= 4
    assert all(len(m.content) <= 2000 for m in messages)
    assert all(m.content.count("```") % 2 == 0 for m in messages)  # each piece renders
    joined = "".join(m.content for m in messages)
    # Nothing lost: every code line once and in order, every Korean sentence.
    code_lines = [line for line in joined.splitlines() if line.startswith("print(")]
    assert code_lines == CODE.splitlines()[1:-1]
    assert joined.count(KOREAN.strip()) == 60


def test_sources_are_packed_into_embeds_within_every_limit_and_none_is_lost() -> None:
    final = Final("The handbook covers it [1].", sources=many_sources(60), language="en")
    messages = final_messages(final)
    embeds = [e for m in messages for e in m.embeds]
    assert len(embeds) > 1
    assert all(len(e.description or "") <= 4096 for e in embeds)
    assert all(len(m.embeds) <= 10 and m.embed_chars <= 6000 for m in messages)
    text = "\n".join(e.description or "" for e in embeds)
    assert [text.count(f"**[{i}]**") for i in range(1, 61)] == [1] * 60
    assert embeds[0].title == f"Sources (1/{len(embeds)})"
    assert messages[0].content == final.answer  # the answer leads; overflow embeds follow


def test_a_source_line_links_web_sources_and_names_files_otherwise() -> None:
    linked = Citation(2, "Deploy *policy*", "https://wiki/deploy", "Deploys", "https://wiki/deploy")
    filed = Citation(1, "운영 핸드북", "/srv/docs/ops-handbook.pdf", "p. 4")
    assert source_line(linked) == r"**[2]** [Deploy \*policy\*](<https://wiki/deploy>) · Deploys"
    assert source_line(filed) == "**[1]** 운영 핸드북 · p. 4 · `ops-handbook.pdf`"
    assert source_line(filed, markdown=False) == "[1] 운영 핸드북 · p. 4 · ops-handbook.pdf"
    unsafe = Citation(3, "Click", "x", link="javascript:alert(1)")
    assert "javascript" not in source_line(unsafe)
    assert len(source_line(Citation(4, "t" * 5000, "x"))) == 1000


def test_plain_text_says_why_and_still_carries_everything() -> None:
    final = Final(KOREAN * 50, sources=many_sources(3), language="ko")
    messages = plain_messages(final)
    assert messages[0].content.startswith("답변을 만들었지만")
    assert all(len(m.content) <= 2000 and not m.embeds for m in messages)
    text = "".join(m.content for m in messages)
    assert final.answer.strip() in text and "[3] 운영 핸드북" in text


def test_progress_shows_the_latest_steps_and_the_tail_of_a_long_draft() -> None:
    done = [Step(f"s{i}", f"Step {i}…", "complete") for i in range(20)]
    steps = (*done, Step("write", "Writing the answer…"))
    draft = "초안 " * 1500 + "마지막 문장"
    text = progress_text(LiveView(steps, draft), "en")
    assert len(text) <= 2000
    assert text.startswith("✅ Step 13\n") and "⏳ Writing the answer…" in text
    assert "Step 12" not in text
    assert text.endswith("마지막 문장")
    assert progress_text(LiveView(), "ko") == "⏳ 생각하는 중…"


def test_thread_names_are_one_line_of_1_to_100_characters() -> None:
    assert thread_name("  배포는   언제\n하나요?  ") == "배포는 언제"
    assert thread_name("\n\n  How do I deploy?\nmore") == "How do I deploy?"
    long = thread_name("질문 " * 80)
    assert len(long) <= 100 and long.endswith("…") and long.startswith("질문 질문")
    assert thread_name("   ") == "?"


def test_the_language_follows_the_question_then_the_discord_locale() -> None:
    assert language_for("배포는 언제 하나요?") == "ko"
    assert language_for("When can we deploy?", discord.Locale.korean) == "en"
    assert language_for("", discord.Locale.korean) == "ko"
    assert language_for("", None) == "en"


def test_the_closest_passages_of_a_not_covered_answer_say_so_in_both_languages() -> None:
    sources = many_sources(2)
    for language, heading in (
        ("ko", "문서에 없는 내용이에요"),
        ("en", "Not covered by the documents"),
    ):
        missing = Final("…", sources=sources, language=language, covered=False)
        [message] = final_messages(missing)
        assert heading in (message.embeds[0].title or "")
        assert heading in plain_messages(missing)[0].content
    [found] = final_messages(Final("35 days [1].", sources=sources, covered=True))
    assert found.embeds[0].title == "Sources"
