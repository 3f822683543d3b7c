"""reStructuredText through real docutils: titles as heading paths, tables and lists as the
Markdown loader gives them, no markup left in the text, no files read, no crash."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.answers.candidates import quotable
from agent.retrieval.chunking import chunk_document
from agent.retrieval.loaders import load_document
from agent.retrieval.types import LoadedDocument

HANDBOOK = Path(__file__).resolve().parents[2] / "shared" / "data" / "handbook" / "docs"

GUIDE = """\
=============
배포 가이드
=============

:작성자: 김서연
:Version: 1.2

.. contents:: 목차
   :local:

.. 이 주석은 나오면 안 됩니다.

개요
====

배포는 매주 화요일에 합니다. Deploys go out on Tuesdays.

절차
----

#. 브랜치를 만듭니다.
#. 리뷰를 받습니다.

   * 한 명 이상 승인
   * CI 통과

#. 머지합니다.

담당
====

+------------+-----------------+
| 서비스     | 담당자          |
+============+=================+
| 결제       | 김서연          |
+------------+-----------------+
| Auth       | Kwon Hyun-soo,  |
|            | Sarah Lindqvist |
+------------+-----------------+
"""


def _load(tmp_path: Path, name: str, text: str) -> LoadedDocument:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return load_document(path, path.read_bytes())


def _text(doc: LoadedDocument) -> str:
    return "\n\n".join(s.text for s in doc.sections)


def test_titles_become_heading_paths_and_leave_no_underlines(tmp_path: Path) -> None:
    doc = _load(tmp_path, "guide.rst", GUIDE)
    assert doc.title == "배포 가이드" and not doc.notes
    assert [s.heading for s in doc.sections] == [
        "배포 가이드",  # the field list under the title
        "배포 가이드 > 개요",
        "배포 가이드 > 개요 > 절차",
        "배포 가이드 > 담당",
    ]
    overview = doc.sections[1].text
    # As in a Markdown section, the title is the first line, then the text.
    assert overview == "개요\n\n배포는 매주 화요일에 합니다. Deploys go out on Tuesdays."
    text = _text(doc)
    for markup in ("====", "----", "+---", ".. ", "::", "목차", "주석"):
        assert markup not in text
    assert "- 작성자: 김서연" in doc.sections[0].text  # a field list: one line a field


def test_grid_table_reads_like_the_same_markdown_table(tmp_path: Path) -> None:
    rst = _load(tmp_path, "owners.rst", GUIDE)
    markdown = _load(
        tmp_path,
        "owners.md",
        "# 배포 가이드\n\n## 담당\n\n| 서비스 | 담당자 |\n|---|---|\n| 결제 | 김서연 |\n"
        "| Auth | Kwon Hyun-soo, Sarah Lindqvist |\n",
    )
    assert rst.sections[-1] == markdown.sections[-1]  # text and heading path alike
    # The extractive answer quotes each row with its header cells, as for Markdown.
    chunks = chunk_document(rst, doc_id="d", source="owners.rst", content_hash="h")
    rows = [c.text for chunk in chunks for c in quotable(0, chunk) if "→" in c.text]
    assert rows == [
        "| 서비스 | 담당자 | → | 결제 | 김서연 |",
        "| 서비스 | 담당자 | → | Auth | Kwon Hyun-soo, Sarah Lindqvist |",
    ]


def test_simple_and_list_tables_and_spanning_cells(tmp_path: Path) -> None:
    doc = _load(
        tmp_path,
        "t.rst",
        "Teams\n=====\n\n"
        "=====  ========\nTeam   Channel\n=====  ========\nPay    #pay-eng\n인증    #auth-eng\n"
        "=====  ========\n\n"
        ".. list-table:: On-call\n   :header-rows: 1\n\n"
        "   * - Week\n     - Primary\n   * - 1\n     - 정민호\n\n"
        "+------+------+------+\n| A    | B    | C    |\n+======+======+======+\n"
        "| both        | c1   |\n+------+------+------+\n| tall | b2   | c2   |\n"
        "+      +------+------+\n|      | b3   | c3   |\n+------+------+------+\n",
    )
    text = doc.sections[0].text
    assert "| Team | Channel |\n|---|---|\n| Pay | #pay-eng |\n| 인증 | #auth-eng |" in text
    assert "On-call\n\n| Week | Primary |\n|---|---|\n| 1 | 정민호 |" in text
    # A cell over two columns fills the first; one over two rows stands in each row.
    assert "| both |  | c1 |\n| tall | b2 | c2 |\n| tall | b3 | c3 |" in text


def test_lists_one_item_a_line_as_markdown_has_them(tmp_path: Path) -> None:
    rst = _load(
        tmp_path,
        "l.rst",
        "Steps\n=====\n\n* 첫째 항목은\n  두 줄입니다.\n* Second item.\n\n"
        "1. Build.\n2. Test.\n\n   - unit\n   - e2e\n\n3. Ship.\n",
    )
    markdown = _load(
        tmp_path,
        "l.md",
        "# Steps\n\n- 첫째 항목은 두 줄입니다.\n- Second item.\n\n"
        "1. Build.\n2. Test.\n  - unit\n  - e2e\n3. Ship.\n",
    )
    assert rst.sections == markdown.sections


def test_definitions_literals_roles_and_admonitions(tmp_path: Path) -> None:
    doc = _load(
        tmp_path,
        "r.rst",
        "Review\n======\n\n"
        "``nit:``\n    사소한 제안입니다.\n\n"
        "배포는 ``make deploy``\\ 를 실행합니다. 롤백은 ``make rollback``을 씁니다.\n"
        "See :ref:`the runbook <runbook>` and :py:func:`~ops.deploy.run`.\n\n"
        ".. note:: 금요일에는 배포하지 않습니다.\n\n"
        ".. versionadded:: 2.0 The ``--dry-run`` flag.\n\n"
        ".. toctree::\n   :maxdepth: 2\n\n   install\n   usage\n\n"
        ".. code-block:: bash\n\n   make deploy\n",
    )
    text = doc.sections[0].text
    assert "- nit: 사소한 제안입니다." in text  # a definition: "- term: definition"
    # Literals keep their text without backticks, a Korean particle right after them too.
    assert "배포는 make deploy를 실행합니다. 롤백은 make rollback을 씁니다." in text
    assert "See the runbook and run." in text  # Sphinx roles: what Sphinx would show
    assert "Note: 금요일에는 배포하지 않습니다." in text
    assert "New in version 2.0: The --dry-run flag." in text
    assert "```\nmake deploy\n```" in text  # code fenced, as in Markdown
    assert "`" not in text.replace("```", "") and "install" not in text and ":ref:" not in text


def test_include_raw_and_file_options_read_nothing(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2-비밀번호\n")
    csv = tmp_path / "secret.csv"
    csv.write_text("a,b\nhunter2-csv,1\n")
    doc = _load(
        tmp_path,
        "evil.rst",
        f"Evil\n====\n\nVisible text.\n\n.. include:: {secret}\n\n"
        f".. include:: /etc/passwd\n   :literal:\n\n"
        f".. raw:: html\n   :file: {secret}\n\n"
        ".. raw:: html\n\n   <script>alert('x')</script>\n\n"
        f".. csv-table:: Data\n   :file: {csv}\n\n"
        f".. literalinclude:: {secret}\n",
    )
    text = _text(doc)
    assert "Visible text." in text
    for leaked in ("hunter2", "root:", "<script>", "alert"):
        assert leaked not in text


def test_broken_rst_still_loads(tmp_path: Path) -> None:
    # Markup errors docutils reports and reads past: the text comes through, no note.
    sloppy = _load(
        tmp_path,
        "sloppy.rst",
        "Title\n===\n\n`unclosed and *open emphasis\n\n+----+---\n| a |\n\n"
        ".. unknown-directive:: x\n\n:bad field\n\n본문은 남습니다.\n",
    )
    assert "본문은 남습니다." in _text(sloppy) and not sloppy.notes
    # Lists nested hundreds deep exhaust docutils' recursion: read as plain text.
    deep = _load(tmp_path, "deep.rst", "깊은 목록\n=========\n\n" + "* " * 400 + "끝\n")
    assert "RecursionError" in deep.notes
    assert deep.sections[0].text.startswith("깊은 목록") and deep.sections[0].text.endswith("끝")
    # A line past docutils' length limit leaves it nothing: read as plain text too.
    long = _load(tmp_path, "long.rst", "긴 줄\n=====\n\n" + "가나다 " * 20_000 + "\n")
    assert long.notes and "가나다" in long.sections[0].text


def test_two_megabytes_load_in_seconds(tmp_path: Path) -> None:
    part = "".join(
        f"Section {n}\n{'=' * 12}\n\n* 항목 {n}: ``value``.\n* Item {n}.\n\n"
        f"+-----+-----+\n| K   | V   |\n+=====+=====+\n| {n:<3} | 값  |\n+-----+-----+\n\n"
        f"{'문단입니다. A paragraph of prose. ' * 20}\n\n"
        for n in range(2600)
    )
    assert len(part.encode()) > 2_000_000
    started = time.monotonic()
    doc = _load(tmp_path, "big.rst", part)
    assert time.monotonic() - started < 30  # about 7 s here; embedding it takes ~4x that
    assert not doc.notes and len(doc.sections) == 2600
    assert "=====" not in _text(doc)


@pytest.mark.skipif(not HANDBOOK.exists(), reason=f"no team handbook in {HANDBOOK}")
def test_handbook_code_review_guidelines() -> None:
    path = HANDBOOK / "code-review-guidelines.rst"
    doc = load_document(path, path.read_bytes())
    assert doc.title == "Code Review Guidelines" and not doc.notes
    sections = {s.heading: s.text for s in doc.sections}
    comments = sections["Code Review Guidelines > Writing review comments"]
    assert comments.startswith("Writing review comments\n\n")
    assert "- nit: Minor style or naming suggestion; the author may ignore it." in comments
    assert all("====" not in s.text and "On this page" not in s.text for s in doc.sections)
    assert "| Most code | 1 approval from any engineer on the team |" in _text(doc)
    assert "- Owner: Engineering Excellence guild" in sections["Code Review Guidelines"]


def test_docutils_is_not_imported_until_an_rst_file_is_read() -> None:
    code = (
        "import sys, agent.retrieval.loaders, bots.cli\n"
        "assert 'docutils' not in sys.modules, 'imported at start-up'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=Path(__file__).parents[1])
