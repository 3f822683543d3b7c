"""The web kind against a real local site: crawl, sitemap, robots.txt, incremental sync,
deletions, failures and scopes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.events import Turn
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from tests.fakes.web_site import FakeSite, html_page
from tests.support.agent_support import agent, collect
from tests.support.format_files import hwpx_bytes, xlsx_bytes
from tests.support.sources_support import Clock, add, counts, found, reasons, source_sync

KOREAN = "휴가 신청은 인사팀 포털에서 최소 3일 전에 해야 하며 팀장 승인이 필요합니다."


@pytest.fixture
def site() -> Iterator[FakeSite]:
    site = FakeSite()
    site.set_page(
        "/",
        html_page(
            "Handbook",
            "The team handbook starts here.",
            ["/deploy.html", "/leave.html", "/private/salaries.html", "https://example.com/x"],
        ),
    )
    site.set_page(
        "/deploy.html",
        html_page("Deploys", "Production deploys run through the CORVINA pipeline every Tuesday."),
    )
    site.set_page("/leave.html", html_page("휴가 규정", KOREAN))
    site.set_page("/private/salaries.html", html_page("Salaries", "Secret salary bands."))
    site.start()
    yield site
    site.stop()


def test_crawl_loads_same_site_pages_respects_robots_and_cites_urls(
    kb: KnowledgeBase, tmp_path: Path, site: FakeSite
) -> None:
    with source_sync(kb, tmp_path) as sync:
        add(sync, "handbook", "web", site.url + "/", allow_private=True)
        outcome = sync.sync("handbook")
        state = sync.store.get("handbook")
    assert outcome.ok, outcome.error
    assert counts(outcome) == {"added": 3, "ignored": 1}
    assert "robots.txt" in reasons(outcome)[site.url + "/private/salaries.html"]
    assert site.requests["/private/salaries.html"] == 0
    assert f"{site.url}/deploy.html" in found(kb, "which pipeline do production deploys use")
    korean = found(kb, "휴가 신청은 어디서 하나요?")
    assert f"{site.url}/leave.html" in korean and "인사팀" in korean
    assert state is not None and state.documents == 3 and state.last_error is None


def test_unchanged_site_resyncs_with_conditional_requests_only(
    kb: KnowledgeBase, tmp_path: Path, site: FakeSite
) -> None:
    with source_sync(kb, tmp_path) as sync:
        add(sync, "handbook", "web", site.url + "/", allow_private=True)
        sync.sync("handbook")
        site.reset_counts()
        chunks_before = kb.vectors.count()
        again = sync.sync("handbook")
        assert counts(again) == {"unchanged": 3, "ignored": 1}
        assert site.page_requests() == 3  # one conditional GET each, all answered 304

        site.set_page("/deploy.html", html_page("Deploys", "Deploys now use the ORCHID pipeline."))
        third = sync.sync("handbook")
    assert counts(third) == {"updated": 1, "unchanged": 2, "ignored": 1}
    assert kb.vectors.count() == chunks_before
    text = found(kb, "which pipeline do deploys use")
    assert "ORCHID" in text and "CORVINA" not in text


def test_sitemap_lastmod_skips_unchanged_pages_without_a_request(
    kb: KnowledgeBase, tmp_path: Path, site: FakeSite
) -> None:
    with source_sync(kb, tmp_path) as sync:
        add(sync, "map", "web", site.url + "/sitemap.xml", allow_private=True)
        first = sync.sync("map")
        assert counts(first) == {"added": 3, "ignored": 1}
        site.reset_counts()
        site.set_page("/leave.html", html_page("휴가 규정", KOREAN + " 병가는 별도입니다."))
        second = sync.sync("map")
    assert counts(second) == {"updated": 1, "unchanged": 2, "ignored": 1}
    assert site.page_requests() == 1 and site.requests["/leave.html"] == 1


async def test_a_deleted_page_is_no_longer_cited_even_from_the_answer_cache(
    kb: KnowledgeBase, tmp_path: Path, site: FakeSite
) -> None:
    turn = Turn(text="Which pipeline do production deploys run through?", thread_root="t1")
    forgotten: list[str] = []
    with source_sync(kb, tmp_path, forget=forgotten.extend) as sync:
        add(sync, "handbook", "web", site.url + "/", allow_private=True)
        sync.sync("handbook")
        async with agent(kb, tmp_path / "agent") as runner:
            _, before = await collect(runner, turn)
            assert any(s.link == f"{site.url}/deploy.html" for s in before.sources)
            site.remove("/deploy.html")
            outcome = sync.sync("handbook")
            assert counts(outcome)["removed"] == 1
            _, after = await collect(runner, Turn(text=turn.text, thread_root="t2"))
        state = sync.store.get("handbook")
    assert not after.cached
    assert all("deploy.html" not in (s.link or "") for s in after.sources)
    assert "CORVINA" not in after.answer
    assert len(forgotten) == 1
    assert state is not None and state.documents == 2


def test_a_failing_site_is_reported_backed_off_and_keeps_its_documents(
    kb: KnowledgeBase, tmp_path: Path, site: FakeSite
) -> None:
    clock = Clock()
    with source_sync(kb, tmp_path, clock=clock) as sync:
        add(sync, "handbook", "web", site.url + "/", every_s=1800, allow_private=True)
        sync.sync("handbook")
        site.status["/"] = 500
        outcome = sync.sync("handbook")
        assert not outcome.ok and "HTTP 500" in (outcome.error or "")
        state = sync.store.get("handbook")
        assert state is not None and state.failures == 1 and state.next_run == clock.now + 60
        assert state.last_error == outcome.error and state.documents == 3
        assert "CORVINA" in found(kb, "production deploys pipeline")  # old version stays
        again = sync.sync("handbook")
        state = sync.store.get("handbook")
        assert not again.ok and state is not None and state.next_run == clock.now + 120
        del site.status["/"]
        healed = sync.sync("handbook")
        state = sync.store.get("handbook")
    assert healed.ok and state is not None and state.failures == 0 and state.last_error is None
    assert state.next_run == clock.now + 1800


def test_a_server_that_does_not_answer_in_time_is_a_stated_failure(
    kb: KnowledgeBase, tmp_path: Path, site: FakeSite
) -> None:
    site.delay_s = 2.0
    with source_sync(kb, tmp_path) as sync:
        add(sync, "slow", "web", site.url + "/", timeout_s=0.2, allow_private=True)
        outcome = sync.sync("slow")
    assert not outcome.ok and "no answer in time" in (outcome.error or "")


def test_a_page_that_fails_keeps_its_old_version_and_others_sync(
    kb: KnowledgeBase, tmp_path: Path, site: FakeSite
) -> None:
    with source_sync(kb, tmp_path) as sync:
        add(sync, "handbook", "web", site.url + "/", allow_private=True)
        sync.sync("handbook")
        site.status["/deploy.html"] = 503
        site.set_page("/leave.html", html_page("휴가 규정", KOREAN + " 연차는 15일입니다."))
        outcome = sync.sync("handbook")
    assert outcome.ok
    assert counts(outcome) == {"updated": 1, "unchanged": 1, "failed": 1, "ignored": 1}
    assert "HTTP 503" in reasons(outcome)[site.url + "/deploy.html"]
    assert "CORVINA" in found(kb, "production deploys pipeline")


def test_huge_and_binary_pages_are_skipped_with_a_reason(
    kb: KnowledgeBase, tmp_path: Path, site: FakeSite
) -> None:
    site.set_page(
        "/",
        html_page("Handbook", "Start here.", ["/deploy.html", "/huge.html", "/logo.png"]),
    )
    site.set_page("/huge.html", html_page("Huge", "word " * 5000))
    site.set_page("/logo.png", b"\x89PNG\r\n\x1a\n" + bytes(200), content_type="image/png")
    with source_sync(kb, tmp_path) as sync:
        add(sync, "handbook", "web", site.url + "/", max_bytes=4000, allow_private=True)
        outcome = sync.sync("handbook")
    why = reasons(outcome)
    assert "larger than 4000 bytes" in why[site.url + "/huge.html"]
    assert "image/png" in why[site.url + "/logo.png"]
    assert counts(outcome) == {"added": 2, "ignored": 2}


def test_linked_office_and_hancom_files_are_read_by_their_content_type(
    kb: KnowledgeBase, tmp_path: Path, site: FakeSite
) -> None:
    """Served without a telling extension, an XLSX and an HWPX are read by Content-Type."""
    site.set_page("/", html_page("Files", "The team's files.", ["/files/1", "/files/2"]))
    xlsx = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    site.set_page("/files/1", xlsx_bytes(), content_type=xlsx)
    site.set_page("/files/2", hwpx_bytes(), content_type="application/hwp+zip")
    with source_sync(kb, tmp_path) as sync:
        add(sync, "files", "web", site.url + "/", allow_private=True)
        outcome = sync.sync("files")
    assert counts(outcome) == {"added": 3}, reasons(outcome)
    top = kb.search("sick leave days per year", SearchOptions(k=1))[0].chunk
    assert top.locator() == "Leave > rows 2-3" and top.source == f"{site.url}/files/1"
    assert "12자 이상" in found(kb, "비밀번호 길이 기준")


def test_a_scoped_source_never_answers_another_scope(
    kb: KnowledgeBase, tmp_path: Path, site: FakeSite
) -> None:
    with source_sync(kb, tmp_path) as sync:
        add(sync, "hr", "web", site.url + "/leave.html", scope="hr", depth=0, allow_private=True)
        assert sync.sync("hr").ok
    assert "인사팀" in found(kb, "휴가 신청", frozenset({"hr"}))
    assert "인사팀" not in found(kb, "휴가 신청", frozenset({"public"}))


def test_removing_a_source_takes_its_documents_out(
    kb: KnowledgeBase, tmp_path: Path, site: FakeSite
) -> None:
    with source_sync(kb, tmp_path) as sync:
        add(sync, "handbook", "web", site.url + "/", allow_private=True)
        sync.sync("handbook")
        report = sync.remove("handbook")
        assert sync.store.get("handbook") is None
    assert len(report.results) == 3
    assert kb.catalog.documents() == [] and kb.vectors.count() == 0
    assert "CORVINA" not in found(kb, "production deploys pipeline")
