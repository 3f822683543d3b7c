"""``teamrag eval`` on a handbook-format set built here: its docs/ ingested into a fresh
index, follow-ups asked in one thread in order, and right and wrong per category, through
the real runner (no LLM), each call its own process."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli_agent import teamrag
from tests.test_eval_handbook import _write, line

ONCALL = """# 온콜 수당

| 구분 | 금액 |
| --- | --- |
| 평일 대기 | 30,000원 |
| 주말·공휴일 대기 | 60,000원 |

온콜 교대는 매주 월요일 10:00에 #oncall-handover 채널에서 합니다.
"""
BACKUPS = """# Backups

Postgres backups are kept for 35 days in the Seoul region.
Redis takes a snapshot every 6 hours.
"""


def _handbook(folder: Path) -> Path:
    docs = folder / "docs"
    docs.mkdir(parents=True)
    (docs / "oncall.md").write_text(ONCALL, "utf-8")
    (docs / "backups.md").write_text(BACKUPS, "utf-8")
    return _write(
        folder,
        [
            line("EE01", "en-en", "how long do we keep postgres backups?", ["35 days"],
                 "backups.md"),
            # Turn 2 stands first in the file; it is asked after turn 1, in its thread.
            line("FU02", "follow-up", "주말은요?", ["60,000원"], "oncall.md", "T1", 2),
            line("FU01", "follow-up", "온콜 평일 대기 수당 하루 얼마예요?", ["30,000원"],
                 "oncall.md", "T1", 1),
            line("NO01", "none", "what is the visitor parking fee?", [], None),
        ],
    )  # fmt: skip


def test_a_handbook_set_is_ingested_asked_in_its_threads_and_scored_per_category(
    tmp_path: Path,
) -> None:
    questions = _handbook(tmp_path / "handbook")
    data = tmp_path / "data"  # the team's own data folder, which eval must not touch
    done = teamrag(["eval", str(questions), "--json"], data, tmp_path)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    rows = result["rows"]
    assert [r["id"] for r in rows] == ["EE01", "FU01", "FU02", "NO01"]
    threads = [r["thread_id"] for r in rows]
    assert threads[1] == threads[2]  # both turns in one conversation
    assert len({threads[0], threads[1], threads[3]}) == 3  # every other question alone
    right = {r["id"]: r["right"] for r in rows}
    assert right["EE01"] and right["FU01"], rows
    assert right["NO01"], rows  # opened as "not found": right for a none-question
    categories = result["categories"]
    assert list(categories) == ["en-en", "follow-up", "none", "all"]
    total = categories["all"]
    assert total["questions"] == 4 and total["bypassed"] == 0
    assert total["right"] + total["confident_wrong"] + total["not_found"] == 4
    assert result["summary"]["part"] == "all" and result["summary"]["mode"] == "extractive"
    assert not data.exists()  # the set's docs went to a fresh index of their own


def test_docs_and_data_dir_and_part_and_a_missing_docs_folder(tmp_path: Path) -> None:
    questions = _handbook(tmp_path / "set")
    docs = tmp_path / "set" / "docs"
    moved = docs.rename(tmp_path / "kb")
    index = tmp_path / "x"
    args = ["eval", str(questions), "--docs", str(moved), "--data-dir", str(index)]
    done = teamrag([*args, "--part", "held", "--json"], tmp_path / "data", tmp_path)
    assert done.returncode == 0, done.stderr
    held = [r["id"] for r in json.loads(done.stdout)["rows"]]
    dev = teamrag([*args, "--part", "dev", "--json"], tmp_path / "data", tmp_path)
    assert dev.returncode == 0, dev.stderr
    dev_ids = [r["id"] for r in json.loads(dev.stdout)["rows"]]
    assert sorted(held + dev_ids) == ["EE01", "FU01", "FU02", "NO01"]
    assert ("FU01" in held) == ("FU02" in held)  # a thread is never split
    assert (index / "index").is_dir()  # kept where asked, for the next run
    missing = teamrag(["eval", str(questions), "--docs", str(docs)], tmp_path / "d", tmp_path)
    assert missing.returncode == 2
    assert f"--docs {docs}: not a folder" in missing.stderr
    table = teamrag(["eval", str(questions), "--docs", str(moved)], tmp_path / "d", tmp_path)
    assert table.returncode == 0, table.stderr
    assert "| category | questions | right | confident wrong |" in table.stdout
