"""The answer cache's store on each backend: an entry replaced, the oldest evicted, all
cleared, the in-memory matrix kept right; several instances, threads and processes on one
store; a SQLite file of another layout replaced."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from agent.cache import AnswerCache, SqliteAnswerCache
from tests.conftest import REPO
from tests.support.cache_support import SCOPE, CacheBackend, FakeClock, other, store, vec

pytest_plugins = ("tests.support.cache_fixtures",)


# -- every backend: store, replace and evict ------------------------------------------
def test_restore_replaces_the_entry(cache: AnswerCache, backend: CacheBackend) -> None:
    store(cache, "How long are backups kept?", vec(1.0), answer="five days")
    store(cache, "how long are backups kept", vec(0.97), answer="seven days", docs={"d": "2"})
    assert backend.entries() == 1
    hit = cache.lookup("HOW LONG ARE BACKUPS KEPT?", None, SCOPE)
    assert hit is not None and hit.answer == "seven days" and hit.doc_versions == {"d": "2"}
    assert hit.question == "how long are backups kept"
    # The replaced entry's old vector and document links went with it.
    hit = cache.lookup("query", vec(1.0), SCOPE)
    assert hit is not None and hit.answer == "seven days"
    assert hit.similarity == pytest.approx(0.97, abs=1e-6)
    assert cache.invalidate_documents(["doc-a"]) == 0


def test_eviction_drops_the_oldest(backend: CacheBackend, clock: FakeClock) -> None:
    cache = backend.open(max_entries=3)
    for i in range(5):
        store(cache, f"question {i}", vec(1.0 - i / 100))
        clock.now += 1
    assert backend.entries() == 3
    assert cache.lookup("question 0", None, SCOPE) is None
    assert cache.lookup("question 1", None, SCOPE) is None
    for i in (2, 3, 4):
        assert cache.lookup(f"question {i}", None, SCOPE) is not None
    hit = cache.lookup("query", vec(1.0), SCOPE)  # question 0 was the closest: gone
    assert hit is not None and hit.question == "question 2"


def test_clear(cache: AnswerCache, backend: CacheBackend) -> None:
    store(cache, "one", vec(1.0))
    assert cache.lookup("query", vec(1.0), SCOPE) is not None
    cache.clear()
    assert backend.entries() == 0
    assert cache.lookup("one", vec(1.0), SCOPE) is None
    store(cache, "two", vec(1.0))
    hit = cache.lookup("query", vec(1.0), SCOPE)
    assert hit is not None and hit.question == "two"


def test_matrix_stays_correct_through_churn(backend: CacheBackend, clock: FakeClock) -> None:
    """Many stores, evictions and invalidations: the in-memory matrix picks up new rows,
    is reloaded as it grows, and rows of deleted entries are never served."""
    cache = backend.open(max_entries=50, threshold=0.999)
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(400, 32)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    for i, row in enumerate(rows):
        store(cache, f"q{i}", row, docs={f"doc-{i % 7}": "1"})
        clock.now += 1
        if i % 40 == 39:
            cache.invalidate_documents([f"doc-{(i + 1) % 7}"])
        hit = cache.lookup("query", row, SCOPE)
        assert hit is not None and hit.question == f"q{i}"
    for i in range(300):  # all evicted (invalidations leave room for a few more)
        assert cache.lookup("query", rows[i], SCOPE) is None
    assert backend.entries() <= 50


# -- every backend: several instances on one store ------------------------------------
def test_two_instances_share_the_cache(backend: CacheBackend) -> None:
    """Two workers (or two instances on one file): what one writes, deletes or clears,
    the other sees, though it has the rows of the old entries loaded."""
    writer, reader = backend.open(), backend.open()
    store(writer, "unrelated", other())
    assert reader.lookup("query", vec(1.0), SCOPE) is None  # reader's matrix is now loaded

    store(writer, "How long are backups kept?", vec(1.0))
    assert reader.lookup("How long are backups kept?", None, SCOPE) is not None
    hit = reader.lookup("reworded", vec(0.95), SCOPE)  # picked up without a reload
    assert hit is not None and hit.question == "How long are backups kept?"

    # Deleted by the other instance: the reader's matrix still has the row, the store not.
    assert writer.invalidate_documents(["doc-a"]) == 2
    assert reader.lookup("reworded", vec(0.95), SCOPE) is None
    store(writer, "How long are backups kept?", vec(0.95), answer="replaced")
    hit = reader.lookup("reworded", vec(1.0), SCOPE)
    assert hit is not None and hit.answer == "replaced"

    writer.clear()  # by one instance, while the other has the rows loaded
    for n in range(3):  # ids may start again at 1: the third one is "replaced"'s old id
        store(writer, f"after the clear {n}", other(), answer="new")
    assert reader.lookup("reworded", vec(1.0), SCOPE) is None  # no old row names them
    hit = reader.lookup("q", other(), SCOPE)
    assert hit is not None and hit.answer == "new"
    reader.clear()
    assert writer.lookup("after the clear 0", None, SCOPE) is None
    assert writer.lookup("reworded", vec(1.0), SCOPE) is None


def test_threads_share_one_instance(cache: AnswerCache, backend: CacheBackend) -> None:
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(25):
                question = f"worker {worker} question {i}"
                store(cache, question, vec(1.0 - (worker * 25 + i) / 1000))
                hit = cache.lookup(question, vec(1.0), SCOPE)
                assert hit is not None
                if i % 5 == 0:
                    cache.invalidate_documents([f"doc-{worker}"])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert backend.entries() == 100


# -- the SQLite file only ---------------------------------------------------------------
def test_another_process_sees_writes(path: Path) -> None:
    """Processes on one machine share the file (Redis workers share through Redis, in
    test_two_instances_share_the_cache)."""
    cache = SqliteAnswerCache(path)
    store(cache, "warm", other())
    assert cache.lookup("query", vec(1.0), SCOPE) is None
    script = (
        "import sys, numpy as np\n"
        "from pathlib import Path\n"
        "from agent.cache import SqliteAnswerCache\n"
        "c = SqliteAnswerCache(Path(sys.argv[1]))\n"
        "v = np.zeros(8, np.float32); v[0] = 1.0\n"
        "c.store('from the child', v, sys.argv[2], 'child answer', [], 'en', {'doc-a': '1'})\n"
        "hit = c.lookup('warm', None, sys.argv[2])\n"
        "assert hit is not None and hit.answer == 'seven days'\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path), SCOPE], cwd=REPO, check=True)
    hit = cache.lookup("query", vec(0.99), SCOPE)
    assert hit is not None and hit.answer == "child answer"
    cache.close()


def test_a_file_of_another_layout_is_replaced(path: Path) -> None:
    import sqlite3

    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, junk TEXT)")
        db.execute("PRAGMA user_version = 99")
    cache = SqliteAnswerCache(path)
    store(cache, "works", vec(1.0))
    assert cache.lookup("works", None, SCOPE) is not None
    cache.close()
