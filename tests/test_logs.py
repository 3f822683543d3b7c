"""The bots' log lines carry the thread id and event id, in text and in JSON."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.plumbing.log_context import bind
from bots.logs import configure_logging, logging_configured
from bots.settings import Settings


@pytest.fixture
def restore_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in root.handlers:
        if handler not in handlers:
            root.removeHandler(handler)
    root.setLevel(level)


def configured(tmp_path: Path, log_format: str) -> io.StringIO:
    stream = io.StringIO()
    settings = Settings(data_dir=tmp_path, log_format=log_format, log_level="INFO")
    configure_logging(settings, stream=stream)
    return stream


def test_text_lines_name_the_thread_and_event(tmp_path: Path, restore_root: None) -> None:
    stream = configured(tmp_path, "text")
    log = logging.getLogger("teamrag.test")
    with bind(thread_id="slack:T1:C1:1700.1", event_id="Ev123"):
        log.info("answered")
    log.info("between turns")
    log.debug("too detailed for INFO")
    first, second = stream.getvalue().splitlines()
    assert " INFO teamrag.test [thread=slack:T1:C1:1700.1 event=Ev123]: answered" in first
    assert "[thread=- event=-]: between turns" in second


async def test_json_lines_have_fixed_fields(tmp_path: Path, restore_root: None) -> None:
    stream = configured(tmp_path, "json")
    log = logging.getLogger("teamrag.test")

    async def turn(thread: str, event: str) -> None:
        with bind(thread_id=thread, event_id=event):
            await asyncio.sleep(0)
            log.warning("질문에 답했습니다 %s", thread)

    # Two turns at once: each line keeps its own ids.
    await asyncio.gather(turn("discord:G:1:2", "int-1"), turn("discord:G:1:3", "int-2"))
    with bind(thread_id="slack:T:C:9", event_id="Ev9"):
        try:
            raise RuntimeError("the LLM went away")
        except RuntimeError:
            log.exception("turn failed")

    lines = stream.getvalue().splitlines()
    assert "\\u" not in lines[0]  # Korean stays readable
    records = [json.loads(line) for line in lines]
    by_thread = {r["thread_id"]: r for r in records}
    assert by_thread["discord:G:1:2"]["event_id"] == "int-1"
    assert by_thread["discord:G:1:2"]["message"] == "질문에 답했습니다 discord:G:1:2"
    assert by_thread["discord:G:1:3"]["event_id"] == "int-2"
    failed = by_thread["slack:T:C:9"]
    assert failed["event_id"] == "Ev9" and failed["level"] == "ERROR"
    assert failed["logger"] == "teamrag.test"
    assert "RuntimeError: the LLM went away" in failed["exc_info"]
    assert failed["time"].endswith("Z") and "T" in failed["time"]
    assert {"time", "level", "logger", "message", "thread_id", "event_id"} <= set(records[0])


def test_configuring_again_replaces_the_handler(tmp_path: Path, restore_root: None) -> None:
    first = configured(tmp_path, "text")
    second = configured(tmp_path, "json")
    logging.getLogger("teamrag.test").warning("once")
    assert first.getvalue() == ""
    assert len(second.getvalue().splitlines()) == 1


def test_a_commands_handler_is_removed_when_it_ends(
    tmp_path: Path, restore_root: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # A handler left behind keeps the command's stderr: the next program's records (a
    # test's, or the program that ran the command) go to a stream that may be closed.
    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    settings = Settings(data_dir=tmp_path, log_format="text", log_level="DEBUG")
    with logging_configured(settings) as handler:
        assert handler in root.handlers
        assert root.level == logging.DEBUG
        logging.getLogger("teamrag.test").info("during")
    assert root.handlers == before
    assert root.level == level
    logging.getLogger("teamrag.test").warning("after")
    err = capsys.readouterr().err
    assert "during" in err and "after" not in err
