"""Shared fixtures: one real USE encoder per session, real embedded stores per test, and
the ones tests/support/ defines (Redis, the deployment, the agent with no LLM)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.ingest import Ingestor
from agent.retrieval.knowledge_base import KnowledgeBase, collection_name
from agent.retrieval.vectors import VectorStore
from agent.sources.store import SourceStore, SqliteSourceStore
from agent.sources.store_postgres import PostgresSourceStore
from tests.fakes.openai_server import FakeOpenAI
from tests.support.deployment import deployment, hosts  # noqa: F401 (fixtures)
from tests.support.extractive_support import runner  # noqa: F401 (fixture)
from tests.support.postgres_support import own_schema, postgres_or_skip
from tests.support.redis_support import (  # noqa: F401 (fixtures)
    redis_connection,
    redis_server,
    redis_url,
    second_redis,
)
from tests.support.sources_support import OpenStore

# Tests never trace to LangSmith, whatever the shell says (a developer's LANGSMITH_TRACING
# would send every test's turns out); tests/test_tracing.py switches it on against a fake.
for _name in (
    "LANGSMITH_TRACING",
    "LANGCHAIN_TRACING_V2",
    "LANGSMITH_TRACING_V2",
    "LANGCHAIN_TRACING",
):
    os.environ.pop(_name, None)

# Rich fixes a console's width when it is created, from COLUMNS (80 in pytest-xdist's
# workers): a CLI message asserted whole must not depend on which worker imported it.
os.environ["COLUMNS"] = "200"

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples" / "kb"


@pytest.fixture(scope="session")
def embedder() -> UniversalSentenceEncoder:
    return UniversalSentenceEncoder()


def open_kb(data_dir: Path, embedder: UniversalSentenceEncoder) -> KnowledgeBase:
    vectors = VectorStore.embedded(data_dir / "chroma", collection_name(embedder.name))
    return KnowledgeBase(data_dir, embedder, vectors)


@pytest.fixture
def kb(tmp_path: Path, embedder: UniversalSentenceEncoder) -> Iterator[KnowledgeBase]:
    knowledge_base = open_kb(tmp_path / "data", embedder)
    yield knowledge_base
    knowledge_base.close()


@pytest.fixture
def ingestor(kb: KnowledgeBase) -> Ingestor:
    return Ingestor(kb)


@pytest.fixture(scope="session")
def sample_kb(
    tmp_path_factory: pytest.TempPathFactory, embedder: UniversalSentenceEncoder
) -> Iterator[KnowledgeBase]:
    """The shipped sample documents, ingested once for the read-only search tests."""
    knowledge_base = open_kb(tmp_path_factory.mktemp("sample") / "data", embedder)
    report = Ingestor(knowledge_base).run([SAMPLES])
    assert not report.failed, report.failed
    yield knowledge_base
    knowledge_base.close()


@pytest.fixture(scope="session")
def fake_llm_server() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture
def fake_llm(fake_llm_server: FakeOpenAI) -> FakeOpenAI:
    """The local OpenAI-compatible server, with a clean script and log for each test."""
    fake_llm_server.reset()
    fake_llm_server.latency_s = 0.0
    return fake_llm_server


@pytest.fixture
def postgres_schema() -> Iterator[tuple[str, str]]:
    """``(url, schema)``: the test Postgres and a schema of this test's own, dropped
    afterwards; skipped, saying why, when no Postgres answers."""
    url = postgres_or_skip()
    with own_schema() as schema:
        yield url, schema


@pytest.fixture(params=["sqlite", "postgres"])
def open_source_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    """Opens the sources store of one backend; each call is another process or host on
    the same store (the data folder's catalog file, or one Postgres schema)."""
    opened: list[SourceStore] = []
    if request.param == "postgres":
        url, schema = request.getfixturevalue("postgres_schema")

        def open_store() -> SourceStore:
            opened.append(PostgresSourceStore(url, schema))
            return opened[-1]
    else:

        def open_store() -> SourceStore:
            opened.append(SqliteSourceStore(tmp_path / "data" / "catalog.sqlite3"))
            return opened[-1]

    yield open_store
    for store in opened:
        store.close()
