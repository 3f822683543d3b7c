"""The conversations ``benchmarks/team_load.py`` sends, and what it reads back: one pass
over the fake Slack's record, the figures of a run (every turn answered exactly once and
in order, the time of each turn from when it could start), where in Redis a turn that
never got answered is stuck, the targets and the table.
"""

from __future__ import annotations

import re
import time
import uuid
from collections import defaultdict
from typing import Any

import redis

from benchmarks.chat_load import spread
from tests.fakes.slack_chat import Message
from tests.fakes.slack_server import BOT_USER, FakeSlack
from tests.support.slack_support import SlackSender
from tests.support.team_support import app_mention

TAG = re.compile(r"#c\d+r\d+t\d+")
QUESTIONS = ("How long are Postgres backups kept?", "And when does the nightly backup run?")

# Thread memory in Postgres outlives a run: ids no earlier run used keep old history out.
INVOCATION = uuid.uuid4().hex[:6].upper()


class Conversation:
    """One thread: its workspace, user and channel, and when each turn was sent."""

    def __init__(self, run: int, number: int, turns: int) -> None:
        ids = f"{INVOCATION}{run}X{number:04d}"
        self.team, self.user, self.channel = f"T{ids}", f"U{ids}", f"C{ids}"
        self.tags = [f"#c{number}r{run}t{t}" for t in range(1, turns + 1)]
        self.sent: list[float] = []
        self.root = ""

    async def send(self, sender: SlackSender, turn: int) -> None:
        text = f"{QUESTIONS[min(turn, len(QUESTIONS) - 1)]} {self.tags[turn]}"
        if turn == 0:
            text = f"<@{BOT_USER}> {text}"
        message = sender.user_message(
            text, channel=self.channel, user=self.user, thread_ts=self.root or None
        )
        message["team"] = self.team
        self.sent.append(time.monotonic())
        if turn == 0:
            self.root = message["ts"]
            assert await sender.event(app_mention(message), team=self.team) == 200
        assert await sender.event(message, team=self.team) == 200


class Record:
    """One pass over what the fake Slack saw, indexed by thread and by message (reading
    it per conversation would cost this process more CPU than the workers spend)."""

    def __init__(self, slack: FakeSlack) -> None:
        self.replies: dict[tuple[str, str | None], list[Message]] = defaultdict(list)
        for message in list(slack.messages.values()):
            self.replies[(message.channel, message.thread_ts)].append(message)
        self.final: dict[str, float] = {}  # message ts -> when its buttons reached Slack
        self.opened: dict[tuple[str, str | None], list[float]] = defaultdict(list)
        for call in list(slack.calls):
            if call.method == "chat.startStream" and call.error is None:
                thread = (str(call.args.get("channel")), call.args.get("thread_ts"))
                self.opened[thread].append(call.at)
            blocks = call.args.get("blocks") or []
            if call.args.get("ts") and any(b.get("type") == "context_actions" for b in blocks):
                self.final[call.args["ts"]] = max(self.final.get(call.args["ts"], 0.0), call.at)

    def answered(self, c: Conversation) -> list[Message]:
        return [m for m in self.replies[(c.channel, c.root)] if m.feedback_values()]

    def opened_at(self, c: Conversation) -> dict[str, float]:
        """When each reply of the thread was opened (the k-th startStream made the k-th)."""
        replies = sorted(self.replies[(c.channel, c.root)], key=lambda m: m.ts)
        starts = sorted(self.opened[(c.channel, c.root)])
        return {m.ts: at for m, at in zip(replies, starts, strict=False)}


def figures(slack: FakeSlack, conversations: list[Conversation]) -> dict[str, Any]:
    """Exactly once, in order, and the time of each turn from when it could start."""
    record = Record(slack)
    waits: dict[int, list[float]] = {}
    from_send: dict[int, list[float]] = {}
    once = in_order = one_at_a_time = extra = 0
    lost: list[str] = []
    for c in conversations:
        answers = record.answered(c)
        tags = [m.group(0) for a in answers if (m := TAG.search(a.markdown))]
        lost += [f"{t} (thread slack:{c.team}:{c.channel}:{c.root})"
                 for t in c.tags if t not in tags]  # fmt: skip
        extra += len(tags) - len(set(tags))
        once += sorted(tags) == sorted(c.tags)
        in_order += tags == c.tags
        if tags != c.tags:
            continue
        opened = record.opened_at(c)
        finals = [record.final[a.ts] for a in answers]
        one_at_a_time += all(
            finals[t - 1] <= opened.get(answers[t].ts, 0.0) for t in range(1, len(answers))
        )
        for turn, (sent, final) in enumerate(zip(c.sent, finals, strict=True)):
            could_start = max(sent, finals[turn - 1]) if turn else sent
            waits.setdefault(turn + 1, []).append((final - could_start) * 1000)
            from_send.setdefault(turn + 1, []).append((final - sent) * 1000)
    every = [w for values in waits.values() for w in values]
    return {
        "conversations": len(conversations),
        "turns": sum(len(c.tags) for c in conversations),
        "answered_exactly_once": once,
        "in_order": in_order,
        "one_at_a_time": one_at_a_time,
        "turns_lost": len(lost),
        "lost": lost[:20],
        "turns_answered_twice": extra,
        "turn_ms": spread(every) if every else None,
        "turn_ms_by_turn": {t: spread(v) for t, v in sorted(waits.items())},
        "from_send_ms_by_turn": {t: spread(v) for t, v in sorted(from_send.items())},
    }


def stuck(redis_url: str, conversations: list[Conversation], record: Record) -> list[str]:
    """Where the unanswered turns are in Redis: their thread's line in the queue, each
    entry's consumer and idle time, the thread's lock. For finding why a turn is stuck."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    found = []
    try:
        for c in conversations:
            if len(record.answered(c)) >= len(c.tags):
                continue
            thread = f"slack:{c.team}:{c.channel}:{c.root}"
            entries = []
            for entry in client.lrange(f"teamrag:queue:slack:thread:{thread}", 0, -1):
                name = entry.decode() if isinstance(entry, bytes) else str(entry)
                pending = client.xpending_range("teamrag:queue:slack", "workers", name, name, 1)
                if pending:
                    p: dict[str, Any] = pending[0]
                    where = (f"{p['consumer']!s} idle {p['time_since_delivered']} ms "
                             f"x{p['times_delivered']}")  # fmt: skip
                else:
                    unread = client.xrange("teamrag:queue:slack", name, name)
                    where = "unread" if unread else "gone"
                entries.append(f"{name}: {where}")
            lock = client.get(f"teamrag:lock:{thread}")
            found.append(f"{thread} answered {len(record.answered(c))}/{len(c.tags)}; "
                         f"line {entries}; lock {lock!r}")  # fmt: skip
    finally:
        client.close()
    return found[:20]


def targets(runs: dict[str, dict[str, Any]]) -> dict[str, bool]:
    found = {
        "every_turn_answered_exactly_once_in_order": all(
            r["answered_exactly_once"] == r["in_order"] == r["conversations"] for r in runs.values()
        )
    }
    steady, killed = runs.get("two workers"), runs.get("one killed")
    if steady is not None and steady["turn_ms"]:
        p95, ideal = steady["turn_ms"]["p95"], steady["ideal_turn_ms"]
        found["p95_within_10_percent_of_ideal"] = p95 <= 1.1 * ideal
    if killed is not None:
        found["no_turn_lost_when_a_worker_dies"] = killed["turns_lost"] == 0
    return found


def markdown(result: dict[str, Any]) -> str:
    lines = [
        "| run | turns | exactly once | in order | lost | twice | p50 / p95 turn ms "
        "| ideal ms | uncontended ms | load s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, run in result["runs"].items():
        turn = run["turn_ms"] or {"p50": "-", "p95": "-"}
        lines.append(
            f"| {name} | {run['turns']} | {run['answered_exactly_once']}/{run['conversations']}"
            f" | {run['in_order']}/{run['conversations']} | {run['turns_lost']}"
            f" | {run['turns_answered_twice']} | {turn['p50']} / {turn['p95']}"
            f" | {run['ideal_turn_ms']} | {run['uncontended_turn_ms']} | {run['load_s']} |"
        )
    return "\n".join(lines)
