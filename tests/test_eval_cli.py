"""``teamrag eval``: a question set through the real command, each call its own process."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.fakes.openai_server import FakeOpenAI
from tests.support.agent_support import analysis, request_text, review, verdict
from tests.test_cli_agent import teamrag

# A SQuAD-format set written here: two English and two Korean paragraphs.
SQUAD: dict[str, Any] = {
    "version": "test",
    "data": [
        {
            "title": "Operations",
            "paragraphs": [
                {
                    "context": "Postgres gets a full backup every night at 03:00 KST. "
                    "Backups are kept for 35 days in the Seoul region.",
                    "qas": [
                        {
                            "id": "1",
                            "question": "How many days are Postgres backups kept?",
                            "answers": [{"text": "35 days", "answer_start": 0}],
                        }
                    ],
                },
                {
                    "context": "The on-call handover happens every Monday at 10:00 in the "
                    "#oncall-handover channel. The outgoing engineer writes the summary.",
                    "qas": [
                        {
                            "id": "2",
                            "question": "Where does the on-call handover happen?",
                            "answers": [{"text": "#oncall-handover", "answer_start": 0}],
                        }
                    ],
                },
                {
                    "context": "신규 입사자는 첫 주에 보안 교육을 받는다. 교육은 매주 화요일 "
                    "오후 2시에 3층 대회의실에서 열린다.",
                    "qas": [
                        {
                            "id": "3",
                            "question": "보안 교육은 어디에서 열리나요?",
                            "answers": [{"text": "3층 대회의실", "answer_start": 0}],
                        }
                    ],
                },
                {
                    "context": "배포는 평일 오전 10시부터 오후 4시까지만 할 수 있다. 금요일 "
                    "오후에는 배포를 하지 않는다.",
                    "qas": [
                        {
                            "id": "4",
                            "question": "배포 가능한 시간은 언제인가요?",
                            "answers": [{"text": "오전 10시부터 오후 4시", "answer_start": 0}],
                        }
                    ],
                },
            ],
        }
    ],
}


def test_a_squad_file_is_ingested_asked_and_scored_with_a_report(tmp_path: Path) -> None:
    squad = tmp_path / "set.json"
    squad.write_text(json.dumps(SQUAD, ensure_ascii=False), encoding="utf-8")
    report = tmp_path / "report.html"
    done = teamrag(
        ["eval", str(squad), "--json", "--report", str(report)], tmp_path / "data", tmp_path
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    summary = result["summary"]
    assert summary["questions"] == 4 and summary["mode"] == "extractive"
    assert summary["bypassed"] == 0 and summary["llm_calls"] == 0
    assert summary["answer_contains"] == 1.0, result["rows"]
    assert summary["cited_expected_source"] == 1.0
    assert summary["hit@5"] == 1.0
    assert summary["latency_p95_ms"] >= summary["latency_p50_ms"] > 0
    rows = {row["question"]: row for row in result["rows"]}
    assert rows["보안 교육은 어디에서 열리나요?"]["contains"] is True
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "보안 교육은 어디에서 열리나요?" in page
    # The team's own data folder was not touched: SQuAD paragraphs go to their own index.
    assert not (tmp_path / "data").exists()


def test_a_jsonl_set_runs_against_the_knowledge_base_and_counts_what_it_cannot_answer(
    tmp_path: Path,
) -> None:
    docs = tmp_path / "kb"  # not docs/ beside the set: that would be the set's own index
    docs.mkdir()
    (docs / "ops.md").write_text(
        "# Backups\n\nPostgres backups are kept for 35 days.\n", encoding="utf-8"
    )
    data = tmp_path / "data"
    assert teamrag(["ingest", str(docs)], data, tmp_path).returncode == 0
    questions = tmp_path / "q.jsonl"
    questions.write_text(
        '{"question": "How long are Postgres backups kept?", "answer": "35 days", '
        '"source": "ops.md"}\n'
        "# comments and blank lines are skipped\n\n"
        '{"question": "안녕하세요"}\n'
        '{"question": "What is the parking fee for visitors?", "answer": ["5,000 won"]}\n',
        encoding="utf-8",
    )
    markdown = tmp_path / "report.md"
    done = teamrag(["eval", str(questions), "--report", str(markdown)], data, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "answer_contains" in done.stdout and "smalltalk" in done.stdout
    table = markdown.read_text(encoding="utf-8")
    assert table.startswith("# teamrag eval: q.jsonl")
    assert "| bypassed" not in table  # labels are words, not keys
    assert "| retrieval hit@5 | 1.0 |" in table and "| retrieval hit@1 |" in table
    assert "answered as smalltalk/tools (no search) | 1 |" in table  # the greeting
    assert "answer contains the expected text | 0.5 |" in table  # 35 days yes, parking no


def test_a_bad_line_is_named_and_an_empty_knowledge_base_says_what_to_do(
    tmp_path: Path,
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "ok?"}\nnot json\n', encoding="utf-8")
    done = teamrag(["eval", str(bad)], tmp_path / "data", tmp_path)
    assert done.returncode == 2
    assert "bad.jsonl:2: not JSON" in done.stderr
    good = tmp_path / "good.jsonl"
    good.write_text('{"question": "How long are backups kept?"}\n', encoding="utf-8")
    empty = teamrag(["eval", str(good)], tmp_path / "data", tmp_path)
    assert empty.returncode == 1
    assert "is empty: run `teamrag ingest PATH` first" in empty.stderr


async def test_with_an_llm_faithfulness_is_the_share_of_claims_the_cited_sources_support(
    tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    one = {"data": [{"title": "Ops", "paragraphs": SQUAD["data"][0]["paragraphs"][:1]}]}
    squad = tmp_path / "one.json"
    squad.write_text(json.dumps(one), encoding="utf-8")
    fake_llm.reply("Analysis", analysis())
    fake_llm.reply("Review", review(0.9))
    fake_llm.reply("text", "Backups are kept for 35 days in Seoul [1].")
    fake_llm.reply("Verdict", verdict(True))
    claims = [
        {"claim": "Backups are kept for 35 days", "supported": True},
        {"claim": "Backups are kept in Busan", "supported": False},
    ]
    fake_llm.reply("Claims", {"claims": claims})
    env = {"OPENAI_BASE_URL": fake_llm.base_url, "OPENAI_API_KEY": "x"}
    done = teamrag(
        ["eval", str(squad), "--faithfulness", "--json"], tmp_path / "d", tmp_path, env=env
    )
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert summary["mode"] == "llm" and summary["faithfulness"] == 0.5
    assert summary["answer_contains"] == 1.0 and summary["llm_calls"] == 4
    judged = [c.body for c in fake_llm.calls if c.task == "Claims"]
    assert len(judged) == 1
    # The judge read the cited passage itself, not only the answer.
    assert "Backups are kept for 35 days in the Seoul region" in request_text(judged[0])
