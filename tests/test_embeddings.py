"""The built-in multilingual encoder: cross-language similarity and parallel ingestion."""

from __future__ import annotations

import numpy as np

from agent.retrieval.embeddings import UniversalSentenceEncoder


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
