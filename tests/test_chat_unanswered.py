"""Questions without an answer from the real usage and feedback files: not covered or voted
down (one item when both), grouped by the document their passages came from, else by a
word they share; a door can ask for its own questions only."""

from __future__ import annotations

from pathlib import Path

from adapters.chat.feedback import AnswerRecord, SqliteFeedbackStore
from adapters.chat.unanswered import unanswered
from adapters.chat.usage import SqliteUsageStore
from agent.events import Citation, Final, Turn


def ask(text: str, platform: str = "slack", root: str = "1.1") -> Turn:
    return Turn(text, platform=platform, workspace="T1", user="U1", thread_root=root)


async def test_not_covered_and_voted_down_questions_grouped_by_topic(tmp_path: Path) -> None:
    usage = SqliteUsageStore(tmp_path / "usage.sqlite")
    feedback = SqliteFeedbackStore(tmp_path / "feedback.sqlite")
    expenses = [Citation(1, "Expenses", "/kb/expenses.md"), Citation(2, "Travel", "/kb/travel.md")]
    missing = Final("…", covered=False)
    try:
        await usage.record(
            ask("출장비 정산은 어떻게 하나요?", root="1"),
            Final("…", sources=expenses, covered=False),
        )
        await usage.record(ask("Where is the parking garage?", root="2"), missing)
        await usage.record(ask("Is parking free for visitors?", root="3"), missing)
        await usage.record(ask("What is the dress code?", "discord", root="4"), missing)
        await usage.record(ask("hello", root="5"), Final("Hi!", route="smalltalk"))
        # Voted down and not covered: one item with both reasons.
        twice = AnswerRecord("slack", "T1", "C", ask("", root="2").thread_id, "U1",
                             "Where is the parking garage?", "…", "knowledge")  # fmt: skip
        answered = Final("35 days [1]", sources=[Citation(1, "Backups", "/kb/backups.md")])
        down = AnswerRecord.of(ask("How long are backups kept?", root="6"), answered)
        for record in (twice, down):
            await feedback.rate(await feedback.remember(record), "U2", "down", "틀림")
        groups = await unanswered(usage, feedback, platform="slack")
    finally:
        usage.close()
        feedback.close()
    shown = [(g.topic, g.kind, sorted(i.question for i in g.items)) for g in groups]
    assert shown == [
        ("park", "keyword", ["Is parking free for visitors?", "Where is the parking garage?"]),
        ("Backups", "document", ["How long are backups kept?"]),  # the newest first
        ("Expenses", "document", ["출장비 정산은 어떻게 하나요?"]),
    ]
    garage = next(i for i in groups[0].items if "garage" in i.question)
    assert garage.reasons == ["not_covered", "thumbs_down"] and garage.comment == "틀림"
