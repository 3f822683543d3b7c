"""``teamrag forget``: documents named by file, folder or scope leave the knowledge base
(search, the keyword index, the answer cache), after a confirmation that can say no."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent.retrieval.catalog_sqlite import SqliteCatalog
from bots.cli import app
from tests.conftest import SAMPLES

pytestmark = pytest.mark.slow

runner = CliRunner()
QUESTION = "Postgres 백업은 며칠 동안 보관되나요?"


@pytest.fixture
def docs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A team's folder: the handbook and the FAQ, a glossary under guides/, and an HR
    note in scope hr; all ingested into a data folder of its own."""
    monkeypatch.setenv("TEAMRAG_DATA_DIR", str(tmp_path / "data"))
    folder = tmp_path / "docs"
    (folder / "guides").mkdir(parents=True)
    shutil.copy(SAMPLES / "ops-handbook.pdf", folder)
    shutil.copy(SAMPLES / "faq.docx", folder)
    shutil.copy(SAMPLES / "glossary.txt", folder / "guides")
    hr = tmp_path / "hr"
    hr.mkdir()
    (hr / "leave.md").write_text("# Leave\n\nParental leave is 16 weeks at full pay.\n")
    assert runner.invoke(app, ["ingest", str(folder)]).exit_code == 0
    assert runner.invoke(app, ["ingest", str(hr), "--scope", "hr"]).exit_code == 0
    return folder


def sources() -> set[str]:
    """The file names the catalog holds."""
    catalog = SqliteCatalog(Path(os.environ["TEAMRAG_DATA_DIR"]) / "catalog.sqlite3")
    try:
        return {Path(doc.source).name for doc in catalog.documents()}
    finally:
        catalog.close()


def ask(question: str) -> dict[str, Any]:
    result = runner.invoke(app, ["ask", question, "--json"])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def searched(query: str) -> set[str]:
    result = runner.invoke(app, ["search", query, "--json"])
    assert result.exit_code == 0, result.output
    return {Path(h["source"]).name for h in json.loads(result.stdout)}


def test_a_forgotten_file_is_no_longer_searched_nor_answered_from_the_cache(docs: Path) -> None:
    first, again = ask(QUESTION), ask(QUESTION)
    assert "35 days" in first["answer"] and again["cached"], again
    assert "ops-handbook.pdf" in searched("Postgres backups kept 35 days")

    result = runner.invoke(app, ["forget", str(docs / "ops-handbook.pdf"), "--yes"])
    assert result.exit_code == 0, result.output
    assert "ops-handbook.pdf" in result.output and "Removed 1 documents." in result.output
    assert sources() == {"faq.docx", "glossary.txt", "leave.md"}
    assert "ops-handbook.pdf" not in searched("Postgres backups kept 35 days")
    after = ask(QUESTION)
    assert not after["cached"] and "35 days" not in after["answer"], after
    assert all(not s["source"].endswith("ops-handbook.pdf") for s in after["sources"])


def test_a_folder_or_a_scope_and_a_no_keeps_everything(docs: Path) -> None:
    declined = runner.invoke(app, ["forget", str(docs / "guides")], input="n\n")
    assert declined.exit_code == 1
    assert "glossary.txt" in declined.output and "Remove 1 documents? [y/N]" in declined.output
    assert "Nothing removed." in declined.output
    assert sources() == {"ops-handbook.pdf", "faq.docx", "glossary.txt", "leave.md"}

    agreed = runner.invoke(app, ["forget", str(docs / "guides")], input="y\n")
    assert agreed.exit_code == 0, agreed.output
    assert sources() == {"ops-handbook.pdf", "faq.docx", "leave.md"}
    by_scope = runner.invoke(app, ["forget", "--scope", "hr", "--yes"])
    assert by_scope.exit_code == 0 and "leave.md" in by_scope.output, by_scope.output
    assert sources() == {"ops-handbook.pdf", "faq.docx"}


def test_nothing_matched_says_so_and_exits_1(docs: Path) -> None:
    missing = runner.invoke(app, ["forget", str(docs / "nope.md"), "--yes"])
    assert missing.exit_code == 1
    assert "no document matches" in missing.output and "teamrag status" in missing.output
    # A name that only starts like a document's is not a folder of it.
    partial = runner.invoke(app, ["forget", str(docs / "ops"), "--yes"])
    assert partial.exit_code == 1
    assert runner.invoke(app, ["forget"]).exit_code == 2
    assert sources() == {"ops-handbook.pdf", "faq.docx", "glossary.txt", "leave.md"}
