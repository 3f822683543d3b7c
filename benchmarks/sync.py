"""Sync benchmark: a 2,000-page website on loopback, synced as a web source.

The site (tests/fakes/web_site.py: Korean and English pages, a sitemap with lastmod,
ETags) runs in its own process, so the server does not share the crawler's GIL. The
benchmark measures, through the real sync engine, ingestion path and default embedder:

- first sync from the sitemap: pages/s (fetch, extract, chunk, embed, write);
- a no-change re-sync from the sitemap (lastmod says nothing changed: no page requests);
- a no-change re-sync by crawling from the index page (a conditional GET per page, 304s);
- a re-sync after one page changed.

    python benchmarks/sync.py [--pages 2000] [--out DIR]

Prints one JSON object and writes it to benchmarks/results/sync.json.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent.retrieval.ingest import Status  # noqa: E402
from agent.sources.base import SourceSpec  # noqa: E402
from agent.sources.registry import default_registry  # noqa: E402
from agent.sources.store import SqliteSourceStore  # noqa: E402
from agent.sources.sync import SourceSync, SyncOutcome  # noqa: E402
from bots.settings import Settings  # noqa: E402
from bots.wiring import build_knowledge_base  # noqa: E402


def timed(sync: SourceSync, name: str) -> tuple[float, SyncOutcome]:
    started = time.perf_counter()
    outcome = sync.sync(name)
    elapsed = time.perf_counter() - started
    if not outcome.ok:
        raise SystemExit(f"sync of {name} failed: {outcome.error}")
    return elapsed, outcome


def counts(outcome: SyncOutcome) -> dict[str, int]:
    return {s.value: outcome.report.count(s) for s in Status if outcome.report.count(s)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args()

    server = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.web_site", "--pages", str(args.pages)],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    try:
        with tempfile.TemporaryDirectory() as folder:
            data = Path(folder)
            settings = Settings(data_dir=data, _env_file=None)  # type: ignore[call-arg]
            kb = build_knowledge_base(settings)
            store = SqliteSourceStore(data / "catalog.sqlite3")
            sync = SourceSync(
                kb, store, default_registry(), env=os.environ, work_dir=data / "sources"
            )
            many = {"max_pages": args.pages + 10}
            store.add(
                SourceSpec("sitemap", "web", f"{url}/sitemap.xml", "public", 3600, many, True)
            )
            first_s, first = timed(sync, "sitemap")
            again_s, again = timed(sync, "sitemap")

            store.add(
                SourceSpec("crawl", "web", f"{url}/", "public", 3600, {**many, "depth": 1}, True)
            )
            crawl_first_s, crawl_first = timed(sync, "crawl")
            crawl_again_s, crawl_again = timed(sync, "crawl")
            kb.close()
            store.close()
        result = {
            "pages": args.pages,
            "first_sync_s": round(first_s, 2),
            "first_sync_pages_per_s": round(args.pages / first_s, 1),
            "first_sync": counts(first),
            "chunks": first.report.chunks,
            "no_change_sitemap_s": round(again_s, 3),
            "no_change_sitemap_share_of_first": round(again_s / first_s, 4),
            "no_change_sitemap": counts(again),
            "crawl_over_ingested_pages_s": round(crawl_first_s, 2),
            "crawl_over_ingested_pages": counts(crawl_first),
            "no_change_crawl_s": round(crawl_again_s, 3),
            "no_change_crawl_share_of_first": round(crawl_again_s / first_s, 4),
            "no_change_crawl": counts(crawl_again),
            "cpus": os.cpu_count(),
        }
    finally:
        server.stdin.close()
        server.wait(10)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sync.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
