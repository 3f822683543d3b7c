"""The built-in multilingual encoder: cross-language similarity and parallel ingestion."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt
import pytest

from agent.retrieval.embeddings import EmbeddingError, QueryMemo, UniversalSentenceEncoder


def test_korean_question_is_closest_to_its_english_answer(
    embedder: UniversalSentenceEncoder,
) -> None:
    passages = [
        "Postgres backups are kept for 35 days.",
        "The cafeteria serves lunch from noon to two.",
        "Deploys are allowed Tuesday to Thursday.",
    ]
    vectors = embedder.embed_documents(passages)
    query = embedder.embed_query("백업은 며칠 동안 보관하나요?")
    assert np.argmax(vectors @ query) == 0
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)


def test_parallel_processes_give_the_same_vectors(embedder: UniversalSentenceEncoder) -> None:
    texts = [f"문서 {i}번: 배포 창은 화요일부터 목요일까지입니다. Item {i}." for i in range(80)]
    parallel = UniversalSentenceEncoder(processes=2)
    try:
        together = parallel.embed_documents(texts)
    finally:
        parallel.close()
    alone = embedder.embed_documents(texts)
    assert together.shape == alone.shape == (80, 512)
    assert np.allclose(together, alone, atol=1e-5)


def _rows(texts: list[str]) -> npt.NDArray[np.float32]:
    return np.asarray([[float(len(t)), 1.0] for t in texts], dtype=np.float32)


def test_a_query_being_embedded_is_waited_for_not_embedded_again() -> None:
    """The runner starts the question's embedding as a turn begins; the cache lookup asking
    for the same text meanwhile joins it (one encoder call per question)."""
    memo = QueryMemo()
    started, release = threading.Event(), threading.Event()
    batches: list[list[str]] = []

    def slow(texts: list[str]) -> npt.NDArray[np.float32]:
        batches.append(texts)
        started.set()
        assert release.wait(10)
        return _rows(texts)

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(memo.one, "백업 보관 기간", slow)
        assert started.wait(10)
        theirs: list[list[str]] = []

        def recorded(texts: list[str]) -> npt.NDArray[np.float32]:
            theirs.append(texts)
            return _rows(texts)

        second = pool.submit(memo.many, ["백업 보관 기간", "배포 창"], recorded)
        release.set()
        assert first.result(10).tolist() == second.result(10)[0].tolist() == [8.0, 1.0]
    assert batches == [["백업 보관 기간"]] and theirs == [["배포 창"]]
    assert memo.one("배포 창", slow).tolist() == [4.0, 1.0]  # remembered
    assert batches == [["백업 보관 기간"]]


def test_a_failed_embedding_fails_its_waiters_and_is_tried_again_later() -> None:
    memo = QueryMemo()
    started, release = threading.Event(), threading.Event()

    def broken(texts: list[str]) -> npt.NDArray[np.float32]:
        started.set()
        assert release.wait(10)
        raise EmbeddingError("the embeddings endpoint is down")

    with ThreadPoolExecutor(2) as pool:
        first = pool.submit(memo.one, "백업", broken)
        assert started.wait(10)
        waiter = pool.submit(memo.one, "백업", _rows)
        release.set()
        for call in (first, waiter):
            with pytest.raises(EmbeddingError, match="endpoint is down"):
                call.result(10)
    assert memo.one("백업", _rows).tolist() == [2.0, 1.0]  # nothing left half-done
