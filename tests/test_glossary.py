"""The team glossary: pairs mined from each shape a document writes them in, kept with their
document in the catalog, a team's file overriding them, `teamrag
glossary --json`, and a Korean question answered from an English sentence through a pair."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.glossary.cache import GlossaryCache
from agent.glossary.glossary import Glossary
from agent.glossary.mine import mine_pairs
from agent.glossary.team_file import GlossaryFileError, read_team_file
from agent.retrieval.catalog import DocumentRecord
from agent.retrieval.catalog_sqlite import SqliteCatalog
from agent.retrieval.loaders import load_document
from agent.retrieval.tokenizer import words
from agent.retrieval.types import Chunk, TermPair
from bots.cli import app

runner = CliRunner()


def _pairs(name: str, text: str) -> set[tuple[str, str, str]]:
    document = load_document(Path(name), text.encode("utf-8"))
    return {(p.ko, p.en, p.origin) for p in mine_pairs(document)}


def test_pairs_are_mined_from_each_shape() -> None:
    found = _pairs(
        "ops.md",
        "# Operations handbook / 운영 핸드북\n\n"
        "Every service has an SLO (서비스 수준 목표) and a budget.\n"
        "근무가 끝나면 인수인계(handover)를 합니다.\n\n"
        "| English | 한국어 |\n|---|---|\n| Error budget | 에러 버짓 |\n\n"
        "Postmortem\n: 회고\n\n- **Rollback**: 롤백\n",
    )
    assert ("운영 핸드북", "Operations handbook", "slash") in found
    assert ("서비스 수준 목표", "SLO", "paren") in found
    assert ("인수인계", "handover", "paren") in found
    assert ("에러 버짓", "Error budget", "table") in found
    assert ("롤백", "Rollback", "definition") in found


def test_prose_around_a_parenthesis_is_not_a_pair() -> None:
    found = _pairs(
        "a.md", "모든 증빙은 비즈플레이(Bizplay)에 올립니다. 새벽 3시(03:00 KST) 실행.\n"
    )
    assert {(ko, en) for ko, en, _ in found} == {("비즈플레이", "Bizplay")}


def test_a_list_in_parentheses_is_examples_not_a_translation() -> None:
    found = _pairs(
        "pay.md",
        "PagerDuty 리포트(on-call shifts, incidents)를 첨부합니다.\n"
        "Producer (PD, 프로듀서) owns the schedule.\n",
    )
    assert {(ko, en) for ko, en, _ in found} == {("프로듀서", "Producer")}


def test_labels_code_and_columns_apart_are_not_pairs_and_a_name_keeps_its_words() -> None:
    found = _pairs(
        "guide.md",
        "- **Pangyo HQ (판교 본사)**: Our headquarters.\n"
        "- 데이터 취급 FAQ (한국어)\n"
        "- 오스틴은 별도 스케줄(`moonrise-backend-us`)을 운영합니다.\n\n"
        "| 기한 | 항목 | 담당 |\n|---|---|---|\n| D-day | 12:00 KST 오픈 | 라이브옵스 전원 |\n",
    )
    # A language's name labels a text, code translates nothing, and two cells of a
    # schedule's row apart are no term and its translation.
    assert {(ko, en) for ko, en, _ in found} == {("판교 본사", "Pangyo HQ")}


def _chunk(doc_id: str, text: str) -> Chunk:
    return Chunk(f"{doc_id}:0", doc_id, 0, text, f"{doc_id}.md", doc_id, "public", None, "", None,
                 "h")  # fmt: skip


def test_pairs_are_stored_and_leave_with_their_document(tmp_path: Path) -> None:
    catalog = SqliteCatalog(tmp_path / "catalog.sqlite3")
    record = DocumentRecord("d1", "gloss.md", "public", "Gloss", "h", 1, "p", 0.0)
    pair = TermPair("인수인계", "handover", "paren", 0.9)
    catalog.replace_document(record, [_chunk("d1", "x")], [["x"]], ["en"], [pair])
    assert catalog.term_pairs() == [("gloss.md", pair)]
    catalog.replace_document(record, [_chunk("d1", "y")], [["y"]], ["en"], [])
    assert catalog.term_pairs() == []  # a new version replaces its pairs
    catalog.replace_document(record, [_chunk("d1", "x")], [["x"]], ["en"], [pair])
    catalog.remove_document("d1")
    assert catalog.term_pairs() == []
    catalog.close()


def test_a_team_file_that_breaks_after_start_leaves_searches_working(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The mined pairs stay in use and the log names the file; `teamrag glossary` (strict)
    still says what is wrong."""
    catalog = SqliteCatalog(tmp_path / "catalog.sqlite3")
    record = DocumentRecord("d1", "gloss.md", "public", "Gloss", "h", 1, "p", 0.0)
    pair = TermPair("인수인계", "handover", "paren", 0.9)
    catalog.replace_document(record, [_chunk("d1", "x")], [["x"]], ["en"], [pair])
    team = tmp_path / "glossary.toml"
    team.write_text('[terms]\n"배포" = "ship"\n', "utf-8")
    cache = GlossaryCache(catalog, team)
    assert cache.get().counterparts(["배포"]) == {"배포": ("ship",)}
    team.write_text("terms = 3", "utf-8")  # broken while the bot runs
    os.utime(team, (team.stat().st_atime, team.stat().st_mtime + 5))
    with caplog.at_level("WARNING"):
        glossary = cache.get()
    assert glossary.counterparts(["인수인계"]) == {"인수인계": ("handover",)}
    assert "배포" not in glossary.counterparts(["배포"])
    assert any("team glossary left out" in r.getMessage() for r in caplog.records)
    team.unlink()
    with pytest.raises(GlossaryFileError, match="TEAMRAG_GLOSSARY"):
        GlossaryCache(catalog, team).get(strict=True)
    catalog.close()


def test_a_team_file_adds_and_overrides_pairs(tmp_path: Path) -> None:
    toml = tmp_path / "glossary.toml"
    toml.write_text('[terms]\n"인수인계" = ["handoff"]\n"카나리" = "canary"\n', "utf-8")
    csv = tmp_path / "glossary.csv"
    csv.write_text("ko,en\n배포,ship\n", "utf-8")
    mined = [("g.md", TermPair("인수인계", "handover", "paren", 0.9))]
    glossary = Glossary(mined, read_team_file(toml) + read_team_file(csv))
    assert glossary.counterparts(words("인수인계 언제")) == {"인수인계": ("handoff",)}
    assert glossary.counterparts(["배포"]) == {"배포": ("ship",)}
    bad = tmp_path / "bad.toml"
    bad.write_text("terms = 3", "utf-8")
    with pytest.raises(GlossaryFileError, match=r"\[terms\]"):
        read_team_file(bad)


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("CHROMA_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "TEAMRAG_EMBEDDINGS",
                 "DATABASE_URL", "TEAMRAG_GLOSSARY"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TEAMRAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "glossary.md").write_text(
        "# Glossary / 용어집\n\n- **Handover (인수인계)**: passing the pager to the next person.\n",
        "utf-8",
    )
    (docs / "oncall.md").write_text(
        "# On-call rotation\n\nThe rotation has six engineers.\n\n"
        "## Weekly handover\n\nThe handover happens every Monday at 10:00 in the ops room.\n"
        "Pagers are tested on Fridays.\n",
        "utf-8",
    )
    (docs / "lunch.md").write_text(
        "# 점심 안내\n\n점심시간은 12시부터 13시까지입니다. 구내식당은 2층에 있습니다.\n", "utf-8"
    )
    result = runner.invoke(app, ["ingest", str(docs)])
    assert result.exit_code == 0, result.output
    return tmp_path


def test_glossary_command_lists_pairs_with_their_origin(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    team = env / "team.csv"
    team.write_text("ko,en\n호출기,pager\n", "utf-8")
    monkeypatch.setenv("TEAMRAG_GLOSSARY", str(team))
    result = runner.invoke(app, ["glossary", "--json"])
    assert result.exit_code == 0, result.output
    pairs = json.loads(result.stdout)["pairs"]
    assert {"ko": "인수인계", "en": "Handover", "origin": "paren", "confidence": 0.9,
            "source": str(env / "docs" / "glossary.md")} in pairs  # fmt: skip
    assert {"ko": "호출기", "en": "pager", "origin": "team file", "confidence": 1.0,
            "source": "team file"} in pairs  # fmt: skip


def test_a_korean_question_is_answered_from_an_english_sentence_through_a_mined_pair(
    env: Path,
) -> None:
    result = runner.invoke(app, ["ask", "인수인계 무슨 요일에 해요?", "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert "Monday at 10:00" in answer["answer"]
    assert answer["covered"] is True
