"""``teamrag ingest`` as a real process that gets killed or interrupted half-way."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.ingest import Ingestor, Status
from tests.conftest import open_kb


def _ctrl_c_as_in_a_terminal() -> None:
    """In the child before exec: Ctrl-C delivered and not ignored, whatever the test
    process inherited or a library in it set (an ignored SIGINT survives exec, and the
    ingest then never hears it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def start_ingest(docs: Path, data: Path) -> subprocess.Popen[str]:
    """Run ``teamrag ingest DOCS`` in its own process group, as a user's shell would."""
    return subprocess.Popen(
        [sys.executable, "-m", "bots", "ingest", str(docs)],
        env={**os.environ, "TEAMRAG_DATA_DIR": str(data)},
        cwd=docs.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_ctrl_c_as_in_a_terminal,  # the child runs no threads before exec
    )


def signal_state(pid: int) -> str:
    """The kernel's view of a process's signals (blocked, ignored, caught), for messages."""
    status = Path(f"/proc/{pid}/status")
    if not status.exists():
        return "(no /proc)"
    lines = status.read_text().splitlines()
    return " ".join(line for line in lines if line.startswith(("SigBlk", "SigIgn", "SigCgt")))


def wait_for_documents(data: Path, count: int, timeout: float = 120) -> None:
    """Return once the catalog lists at least ``count`` documents."""
    catalog = data / "catalog.sqlite3"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if catalog.exists():
            with sqlite3.connect(catalog) as db:
                try:
                    if db.execute("SELECT COUNT(*) FROM documents").fetchone()[0] >= count:
                        return
                except sqlite3.OperationalError:
                    pass  # the schema is still being created
        time.sleep(0.05)
    raise TimeoutError(f"the catalog never listed {count} documents")


def write_files(docs: Path, n: int) -> None:
    docs.mkdir()
    for i in range(n):
        body = "\n\n".join(
            f"Section {j} of file {i} talks about topic {i * 7 + j}." * 6 for j in range(8)
        )
        (docs / f"f{i:03d}.md").write_text(f"# File {i}\n\n{body}", encoding="utf-8")


def test_killed_ingest_process_leaves_a_consistent_store(
    tmp_path: Path, embedder: UniversalSentenceEncoder
) -> None:
    """SIGKILL a real ``teamrag ingest`` mid-run; the next run finishes the job cleanly."""
    n_files = 150  # several batches of chunks, so the kill lands between two of them
    docs, data = tmp_path / "docs", tmp_path / "data"
    write_files(docs, n_files)
    proc = start_ingest(docs, data)
    wait_for_documents(data, 3)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()

    kb = open_kb(data, embedder)
    docs_done = kb.catalog.documents()
    assert 3 <= len(docs_done) < n_files
    for doc in docs_done:  # every listed document is complete
        assert len(kb.catalog.document_chunks(doc.doc_id)) == doc.n_chunks
    report = Ingestor(kb).run([docs])
    assert not report.failed
    assert report.count(Status.UNCHANGED) == len(docs_done)
    assert len(kb.catalog.documents()) == n_files
    assert kb.vectors.count() == kb.catalog.chunk_count()
    kb.close()


def test_ctrl_c_during_ingest_says_what_happened(tmp_path: Path) -> None:
    """Ctrl-C once the first documents are switched in: not after a fixed delay, which a
    loaded machine may spend on the whole ingest (it then exits 0, not 130)."""
    # The first documents appear only after the model and the embedding workers have
    # loaded (about 6 s here); 400 files then left under 2 s of work, which a Ctrl-C
    # landing behind a batch under way could miss. 2,000 leave 10 s or more; interrupted,
    # the test takes no longer.
    n_files = 2000
    docs, data = tmp_path / "docs", tmp_path / "data"
    write_files(docs, n_files)
    proc = start_ingest(docs, data)
    wait_for_documents(data, 1)
    state = signal_state(proc.pid)
    os.killpg(proc.pid, signal.SIGINT)  # as Ctrl-C does: the whole group, workers included
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, f"{state}\n{stderr}"
    assert "Interrupted" in stderr and "Traceback" not in stderr
    with sqlite3.connect(data / "catalog.sqlite3") as db:  # it stopped half-way
        assert 1 <= db.execute("SELECT COUNT(*) FROM documents").fetchone()[0] < n_files
