"""An embedded Chroma store gives its files back when closed."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from agent.retrieval.types import Chunk
from agent.retrieval.vectors import VectorStore


def open_files() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_closing_stores_releases_their_files_and_spares_one_still_open(tmp_path: Path) -> None:
    # Each embedded store holds its SQLite files and segment files; a bot that opens a
    # knowledge base per command, or a long test run, would reach the open-files limit.
    first = VectorStore.embedded(tmp_path / "warm-up", "teamrag-test")
    first.close()
    before = open_files()
    for n in range(10):
        store = VectorStore.embedded(tmp_path / f"store-{n}", "teamrag-test")
        assert store.count() == 0
        store.close()
    assert open_files() - before <= 2, open_files() - before

    kept = VectorStore.embedded(tmp_path / "shared", "teamrag-test")
    other = VectorStore.embedded(tmp_path / "shared", "teamrag-test")
    other.close()  # Chroma counts the clients of one folder: the first keeps its system
    vector = np.ones((1, 4), dtype=np.float32)
    assert kept.query(vector[0], k=1) == []
    kept.close()


def test_equal_distances_come_back_in_id_order(tmp_path: Path) -> None:
    """The same text in two documents is the same vector: Chroma returns such hits in an
    order that changes between processes, and the store puts them in id order."""
    store = VectorStore.embedded(tmp_path / "store", "teamrag-test")
    names = ["doc-q", "doc-c", "doc-x", "doc-a", "doc-m"]
    chunks = [Chunk(f"{name}:0", name, 0, "같은 문장", f"/{name}.md", name) for name in names]
    vector = np.array([[0.6, 0.8, 0.0, 0.0]], dtype=np.float32)
    store.add(chunks, np.repeat(vector, len(chunks), axis=0))
    other = np.array([[0.0, 0.6, 0.8, 0.0]], dtype=np.float32)
    store.add([Chunk("doc-b:0", "doc-b", 0, "다른 문장", "/doc-b.md", "doc-b")], other)
    found = store.query(vector[0], k=6)
    store.close()
    assert [cid for cid, _ in found] == [*sorted(f"{n}:0" for n in names), "doc-b:0"]
