"""The ``teamrag`` command as a user runs it: ingest, ask, search, status, bench, and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bots.cli import app
from tests.conftest import REPO, SAMPLES
from tests.support.servers import free_port

runner = CliRunner()


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    for name in ("CHROMA_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "TEAMRAG_EMBEDDINGS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEAMRAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # no stray .env from the developer's folder
    return {"TEAMRAG_DATA_DIR": str(tmp_path / "data")}


def test_ingest_then_ask_as_a_separate_process(env: dict[str, str], tmp_path: Path) -> None:
    """The README's flow, each step in its own process like a user's shell."""
    base = {**os.environ, **env, "COLUMNS": "120"}
    ingest = subprocess.run(
        [sys.executable, "-m", "bots", "ingest", str(SAMPLES)],
        env=base,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ingest.returncode == 0, ingest.stderr
    assert "Ingest summary" in ingest.stderr
    ask = subprocess.run(
        [sys.executable, "-m", "bots", "ask", "Postgres 백업은 며칠 동안 보관되나요?", "--json"],
        env=base,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ask.returncode == 0, ask.stderr
    result = json.loads(ask.stdout)
    assert result["language"] == "ko" and "35 days" in result["answer"]
    assert result["sources"][0]["source"].endswith("ops-handbook.pdf")
    assert result["sources"][0]["locator"] == "p. 4"


def test_bad_input_exit_code_and_report(env: dict[str, str], tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# Ok\n\nThe wifi password is on the fridge.", "utf-8")
    # CP949 is read now (tests/test_loaders_korean_formats.py); bytes no encoding explains are not.
    (docs / "bad.txt").write_bytes(bytes(range(128, 256)))
    result = runner.invoke(app, ["ingest", str(docs), str(tmp_path / "nope")])
    assert result.exit_code == 1
    assert "bad.txt" in result.output and "not UTF-8" in result.output
    assert "encoding is unclear" in result.output
    assert "no such file or folder (check the path; relative to" in result.output
    search = runner.invoke(app, ["search", "wifi password", "--json"])
    assert search.exit_code == 0
    assert json.loads(search.stdout)[0]["source"].endswith("ok.md")


def test_status_lists_documents(env: dict[str, str]) -> None:
    runner.invoke(app, ["ingest", str(SAMPLES / "glossary.txt"), "--scope", "eng"])
    result = runner.invoke(app, ["status"])
    assert result.exit_code == 0
    assert "glossary.txt" in result.output and "eng" in result.output


def test_ask_on_an_empty_knowledge_base_says_what_to_do(env: dict[str, str]) -> None:
    result = runner.invoke(app, ["ask", "How long are backups kept?", "--json"])
    assert result.exit_code == 0
    assert "teamrag ingest" in result.output  # the warning, on stderr
    final = json.loads(result.stdout.strip().splitlines()[-1])
    assert final["sources"] == [] and "ingested" in final["answer"]
    assert final["covered"] is False  # the documents do not answer it
    hello = runner.invoke(app, ["ask", "hello", "--json"])
    greeting = json.loads(hello.stdout.strip().splitlines()[-1])
    assert greeting["route"] == "smalltalk" and greeting["covered"] is None  # not asked of them


def test_invalid_scope_is_rejected(env: dict[str, str]) -> None:
    result = runner.invoke(app, ["ingest", str(SAMPLES), "--scope", "Bad Scope!"])
    assert result.exit_code == 2 and "invalid scope" in result.output


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_question_is_bad_usage(env: dict[str, str], text: str) -> None:
    """Exit 2, like any bad argument: a script whose variable came out empty must not read
    a refusal printed with exit 0 as an answer."""
    result = runner.invoke(app, ["ask", text])
    assert result.exit_code == 2 and "the question is empty" in result.output


def test_unreachable_chroma_url_names_the_fix(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHROMA_URL", f"http://127.0.0.1:{free_port()}")
    result = runner.invoke(app, ["search", "anything"])
    assert result.exit_code == 1
    assert "CHROMA_URL unreachable" in result.output and "unset CHROMA_URL" in result.output


def test_bench_retrieval_on_a_small_squad_file(env: dict[str, str], tmp_path: Path) -> None:
    paragraphs = [
        (
            "서울의 지하철은 1974년에 처음 개통되었다. 현재 9개의 노선이 운행된다.",
            "서울 지하철은 언제 개통되었나?",
            "1974년",
        ),
        (
            "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
            "When was the Eiffel Tower completed?",
            "1889",
        ),
        (
            "김치는 배추와 고춧가루로 만드는 한국의 전통 발효 음식이다.",
            "김치의 주재료는 무엇인가?",
            "배추",
        ),
    ]
    squad = {
        "data": [
            {
                "title": "t",
                "paragraphs": [
                    {
                        "context": c,
                        "qas": [
                            {
                                "id": str(i),
                                "question": q,
                                "answers": [{"text": a, "answer_start": c.index(a)}],
                            }
                        ],
                    }
                    for i, (c, q, a) in enumerate(paragraphs)
                ],
            }
        ]
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(squad, ensure_ascii=False), "utf-8")
    for mode in ("hybrid", "keyword", "dense"):
        result = runner.invoke(
            app, ["bench", "retrieval", "--squad", str(path), "--mode", mode, "--json"]
        )
        assert result.exit_code == 0, result.output
        metrics = json.loads(result.stdout)
        assert metrics["questions"] == 3 and metrics["paragraphs"] == 3
        assert metrics["hit@1"] == 1.0, (mode, metrics)
        assert metrics["answer_in_top5"] == 1.0
        assert metrics["ingest_chunks_per_s"] > 0
        assert set(metrics) >= {"hit@5", "hit@10", "mrr@10", "query_p50_ms", "query_p95_ms"}


def test_readme_commands_are_the_ones_ci_runs() -> None:
    readme = (REPO / "README.md").read_text("utf-8")
    ci = (REPO / ".ci" / "run").read_text("utf-8")
    assert "make demo" in readme and "make test" in readme
    assert "make test" in ci


def test_bad_setting_names_the_variable(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAMRAG_CHUNK_SIZE", "huge")
    result = runner.invoke(app, ["search", "anything"])
    assert result.exit_code == 2
    assert "TEAMRAG_CHUNK_SIZE" in result.output and "'huge'" in result.output


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("TEAMRAG_LLM", "maybe"),
        ("TEAMRAG_EMBEDDINGS", "foo"),
        ("DATABASE_URL", "mysql://db"),
        # At start, not at the first date question or usage record.
        ("TEAMRAG_TIMEZONE", "Mars/Olympus"),
    ],
)
def test_every_bad_setting_is_named_as_it_is_set(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    """Before, TEAMRAG_LLM was reported as "LLM", and a MySQL DATABASE_URL reached psycopg
    and ended in its traceback."""
    monkeypatch.setenv(variable, value)
    result = runner.invoke(app, ["status"])
    assert result.exit_code == 2, result.output
    assert f"{variable}:" in result.output and repr(value) in result.output


def test_a_short_jwt_secret_is_refused_at_start_without_echoing_it(
    env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, TEAMRAG_JWT_SECRET=a was taken, and a token signed with 'a' was honoured."""
    monkeypatch.setenv("TEAMRAG_JWT_SECRET", "short-secret-29-bytes-long-xx")
    result = runner.invoke(app, ["status"])
    assert result.exit_code == 2, result.output
    assert "TEAMRAG_JWT_SECRET:" in result.output and "32 bytes at least" in result.output
    assert "secrets.token_urlsafe(48)" in result.output
    assert "short-secret-29" not in result.output
    monkeypatch.setenv("TEAMRAG_JWT_SECRET", "x" * 32)  # 32 bytes is enough
    assert runner.invoke(app, ["status"]).exit_code == 0


def test_unwritable_data_folder_names_the_fix(
    env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the data folder should be", "utf-8")
    monkeypatch.setenv("TEAMRAG_DATA_DIR", str(blocker / "data"))
    result = runner.invoke(app, ["search", "anything"])
    assert result.exit_code == 1
    assert "TEAMRAG_DATA_DIR" in result.output and "Traceback" not in result.output


def test_unknown_search_mode_is_rejected(env: dict[str, str]) -> None:
    result = runner.invoke(app, ["search", "anything", "--mode", "fuzzy"])
    assert result.exit_code == 2
    assert "--mode must be one of hybrid, dense, keyword" in result.output


def test_every_command_lists_with_a_one_line_summary() -> None:
    """`teamrag --help` shows a command's first paragraph with its line breaks kept (rich
    markup), so a docstring that wraps its summary broke the listing mid-sentence."""
    import inspect
    from typing import Any

    import typer

    wrapped: list[str] = []

    def walk(command: Any, path: str) -> None:  # typer's vendored click Command
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}")
        summary = inspect.cleandoc(command.short_help or command.help or "").split("\n\n")[0]
        if not summary or "\n" in summary:
            wrapped.append(f"{path}: {summary!r}")

    walk(typer.main.get_command(app), "teamrag")
    assert not wrapped, "commands whose --help summary is empty or wraps:\n" + "\n".join(wrapped)
