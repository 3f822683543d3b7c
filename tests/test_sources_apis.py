"""The Confluence, Notion and Google Drive kinds against fake APIs over real HTTP:
only changed documents are fetched, deletions propagate, secrets come from named
variables, failures are stated."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fpdf import FPDF

from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.sources.registry import default_registry
from tests.fakes.workspace_apis import TOKEN, Doc, FakeWorkspace
from tests.support.format_files import hwpx_bytes, xlsx_bytes
from tests.support.sources_support import add, counts, found, reasons, source_sync

ENV = {"WIKI_TOKEN": TOKEN, "WIKI_USER": "me@example.com"}
SHEET = "application/vnd.google-apps.spreadsheet"


@pytest.fixture
def api() -> Iterator[FakeWorkspace]:
    fake = FakeWorkspace().start()
    yield fake
    fake.stop()


def test_confluence_space_incremental_by_version_with_attachments(
    kb: KnowledgeBase, tmp_path: Path, api: FakeWorkspace
) -> None:
    api.confluence["101"] = Doc("Release process", "<p>Releases are cut by the PELICAN bot.</p>")
    api.confluence["102"] = Doc(
        "장애 대응", "<h2>연락망</h2><p>장애가 나면 온콜 담당자에게 전화합니다.</p>"
    )
    api.attachments["9001"] = ("101", Doc("checklist.txt", "Release checklist: tag, build, ship."))
    api.attachments["9002"] = ("101", Doc("diagram.png", "binary"))
    api.attachments["9003"] = ("101", Doc("규정.hwpx", "", raw=hwpx_bytes()))
    with source_sync(kb, tmp_path, env=ENV) as sync:
        add(sync, "wiki", "confluence", "ENG", api_url=api.url + "/confluence",
            token_env="WIKI_TOKEN", user_env="WIKI_USER", attachments=True,
            allow_private=True)  # fmt: skip
        first = sync.sync("wiki")
        assert first.ok, first.error
        assert counts(first) == {"added": 4, "ignored": 1}, first.report.failed
        assert "diagram.png: not a type teamrag reads" in " ".join(reasons(first).values())
        top = kb.search("비밀번호 길이 기준", SearchOptions(k=1))[0].chunk
        assert top.title == "규정.hwpx" and top.locator() == "section 1 > 보안 규정 > 계정"
        link = f"{api.url}/confluence/pages/viewpage.action?pageId=101"
        assert link in found(kb, "who cuts releases")
        assert "온콜" in found(kb, "장애 연락망")

        api.requests.clear()
        api.confluence["101"] = Doc("Release process", "<p>Releases are cut by SWIFT.</p>", 2)
        del api.confluence["102"]
        second = sync.sync("wiki")
    assert counts(second) == {"updated": 1, "unchanged": 2, "removed": 1, "ignored": 1}
    assert api.requests["/confluence/rest/api/content/101"] == 1  # only the changed body
    assert api.hits("/confluence/download/") == 0  # the attachment did not change
    assert "온콜" not in found(kb, "장애 연락망")


def test_confluence_failures_name_the_cause(
    kb: KnowledgeBase, tmp_path: Path, api: FakeWorkspace
) -> None:
    api.confluence["101"] = Doc("Release process", "<p>Releases are cut by the PELICAN bot.</p>")
    api.confluence["102"] = Doc("Other", "<p>Lunch is at noon.</p>")
    base = api.url + "/confluence"
    with source_sync(kb, tmp_path, env={"BAD": "nope", "WIKI_TOKEN": TOKEN}) as sync:
        add(
            sync,
            "unset",
            "confluence",
            "ENG",
            api_url=base,
            token_env="MISSING_TOKEN",
            allow_private=True,
        )
        add(sync, "refused", "confluence", "ENG", api_url=base, token_env="BAD", allow_private=True)
        add(
            sync,
            "ok",
            "confluence",
            "ENG",
            api_url=base,
            token_env="WIKI_TOKEN",
            allow_private=True,
        )
        unset, refused = sync.sync("unset"), sync.sync("refused")
        api.fail["/confluence/rest/api/content/102"] = 500
        ok = sync.sync("ok")
    assert unset.error == (
        "MISSING_TOKEN is not set: export it (the Confluence API token of source 'unset') "
        "or pass --token-env NAME to use another variable"
    )
    assert "refused the token (HTTP 401" in (refused.error or "")
    assert ok.ok and counts(ok) == {"added": 1, "failed": 1}
    assert "HTTP 500" in reasons(ok)[f"{base}/pages/viewpage.action?pageId=102"]


def test_secrets_are_named_never_stored() -> None:
    registry = default_registry()
    with pytest.raises(ValueError, match="NAME of an environment variable"):
        registry.check_options("notion", {"token_env": "secret_abcdefghijklmnopqrstuvwxyz"})
    assert registry.check_options("notion", {"token_env": "NOTION_TOKEN"}) == {
        "token_env": "NOTION_TOKEN"
    }


def test_notion_database_fetches_only_edited_pages(
    kb: KnowledgeBase, tmp_path: Path, api: FakeWorkspace
) -> None:
    api.notion_db["p1"] = Doc("Expense policy", "## Meals\n\nMeals are refunded up to 30,000 won.")
    api.notion_db["p2"] = Doc("재택 근무", "재택 근무는 주 2회까지 가능합니다.")
    with source_sync(kb, tmp_path, env=ENV) as sync:
        add(
            sync,
            "notion",
            "notion",
            "db1",
            api_url=api.url + "/notion",
            token_env="WIKI_TOKEN",
            allow_private=True,
        )
        first = sync.sync("notion")
        assert counts(first) == {"added": 2}, first.error
        assert "https://www.notion.so/p1" in found(kb, "meal refund limit")
        api.requests.clear()
        api.notion_db["p2"] = Doc("재택 근무", "재택 근무는 주 3회까지 가능합니다.", 2)
        second = sync.sync("notion")
    assert counts(second) == {"updated": 1, "unchanged": 1}
    assert api.requests["/notion/v1/blocks/p2/children"] == 1
    assert api.requests["/notion/v1/blocks/p1/children"] == 0
    assert "주 3회" in found(kb, "재택 근무 가능 횟수")


def test_notion_page_tree_follows_sub_pages_and_drops_deleted(
    kb: KnowledgeBase, tmp_path: Path, api: FakeWorkspace
) -> None:
    api.notion_pages["root"] = Doc("Engineering", "Welcome to engineering.")
    api.notion_pages["child"] = Doc(
        "On-call", "The on-call rotation changes every Monday.", parent="root"
    )
    with source_sync(kb, tmp_path, env=ENV) as sync:
        add(
            sync,
            "tree",
            "notion",
            "root",
            api_url=api.url + "/notion",
            token_env="WIKI_TOKEN",
            allow_private=True,
        )
        assert counts(sync.sync("tree")) == {"added": 2}
        del api.notion_pages["child"]
        second = sync.sync("tree")
    assert counts(second) == {"unchanged": 1, "removed": 1}


def pdf_bytes(text: str) -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.multi_cell(0, 8, text)
    return bytes(pdf.output())


def test_drive_folder_exports_docs_sheets_and_pdfs(
    kb: KnowledgeBase, tmp_path: Path, api: FakeWorkspace
) -> None:
    api.drive["d1"] = Doc("Travel", "# Travel\n\nTrains are booked through the OSPREY desk.",
                          kind="application/vnd.google-apps.document", parent="root")  # fmt: skip
    api.drive["s1"] = Doc("Budget", "", kind=SHEET, parent="root", raw=xlsx_bytes())
    # A Hancom file whose name lost its extension: read by its type.
    api.drive["h1"] = Doc("보안 규정", "", kind="application/haansofthwpx", parent="root",
                          raw=hwpx_bytes())  # fmt: skip
    api.drive["f1"] = Doc("sub", "", kind="application/vnd.google-apps.folder", parent="root")
    api.drive["p1"] = Doc("security.pdf", "", kind="application/pdf", parent="f1",
                          raw=pdf_bytes("Laptops must use full disk encryption."))  # fmt: skip
    api.drive["i1"] = Doc("photo.jpg", "x", kind="image/jpeg", parent="root")
    with source_sync(kb, tmp_path, env=ENV) as sync:
        add(
            sync,
            "drive",
            "gdrive",
            "root",
            api_url=api.url + "/drive",
            token_env="WIKI_TOKEN",
            allow_private=True,
        )
        first = sync.sync("drive")
        assert counts(first) == {"added": 4, "ignored": 1}, first.error
        # Sheets come as XLSX (every sheet, rows cited), not as the first sheet's CSV.
        leave = kb.search("sick leave days per year", SearchOptions(k=1))[0].chunk
        assert leave.locator() == "Leave > rows 2-3" and "Sick leave | 10" in leave.text
        assert "12자 이상" in found(kb, "비밀번호 길이 기준")
        assert "https://drive.google.com/file/d/d1/view" in found(kb, "how are trains booked")
        assert "encryption" in found(kb, "laptop disk encryption")
        api.requests.clear()
        api.drive["s1"] = Doc("Budget", "", kind=SHEET, parent="root", version=2,
                              raw=xlsx_bytes(rows=5))  # fmt: skip
        second = sync.sync("drive")
    assert counts(second) == {"updated": 1, "unchanged": 3, "ignored": 1}
    assert api.hits("/drive/drive/v3/files/") == 1
