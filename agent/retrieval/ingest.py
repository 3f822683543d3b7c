"""Ingestion: find files, load, chunk, embed and switch each document's version atomically.

Per document: unchanged (same bytes, same pipeline, same scope) is skipped;
changed is re-chunked and replaces the old version in one catalog
transaction; unreadable is reported with the reason and the old version, if
any, stays searchable. ``prune`` removes documents under the given folders
whose files are gone.

Files and remote documents (agent/sources/) take the same path: each is an
:class:`IngestItem` (a catalog key, a name whose extension picks the loader, and
its bytes), so a web page or a Git file is compared, chunked and switched exactly
like a local file.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
from collections.abc import Callable, Iterable, Sized
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path

from agent.glossary.mine import mine_pairs
from agent.retrieval.catalog import DocumentRecord
from agent.retrieval.chunking import chunk_document
from agent.retrieval.embeddings import EmbeddingError, Vectors
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.retrieval.loaders import LoadError, is_supported, load_document
from agent.retrieval.tokenizer import tokenize
from agent.retrieval.types import DEFAULT_SCOPE, Chunk, TermPair
from agent.retrieval.vectors import VectorStoreError
from agent.wording.language import detect_language

_SCOPE = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")


class Status(StrEnum):
    ADDED = "added"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    FAILED = "failed"
    REMOVED = "removed"
    IGNORED = "ignored"


@dataclass(frozen=True)
class FileResult:
    path: str
    status: Status
    chunks: int = 0
    reason: str = ""


@dataclass
class IngestReport:
    results: list[FileResult] = field(default_factory=list)

    def count(self, status: Status) -> int:
        return sum(1 for r in self.results if r.status is status)

    @property
    def chunks(self) -> int:
        return sum(r.chunks for r in self.results if r.status in (Status.ADDED, Status.UPDATED))

    @property
    def failed(self) -> list[FileResult]:
        return [r for r in self.results if r.status is Status.FAILED]


ProgressCallback = Callable[[str, int, int], None]
"""Called as (current file, files done, files total); total is 0 while unknown."""


@dataclass(frozen=True)
class IngestItem:
    """One document to ingest, wherever it comes from.

    ``source`` is its key in the catalog (a path or a URL); ``name`` is a file name whose
    extension picks the loader; ``read`` gives its bytes (a file is read only when its
    turn comes). ``link`` replaces the loader's citation link; ``link_for`` gives a
    chunk's own link from its text (a Git file links each passage to its lines).
    """

    source: str
    name: str
    read: Callable[[], bytes]
    scope: str | None = None  # None: the scope of the run
    title: str | None = None
    link: str | None = None
    link_for: Callable[[str], str | None] | None = None


def file_item(path: Path) -> IngestItem:
    return IngestItem(source=str(path), name=path.name, read=path.read_bytes)


def validate_scope(scope: str) -> str:
    if not _SCOPE.match(scope):
        raise ValueError(
            f"invalid scope {scope!r}: use 1-64 lowercase letters, digits, '.', '_' or '-'"
        )
    return scope


def document_id(source: str) -> str:
    return hashlib.sha1(source.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class _Discovery:
    files: list[Path]
    problems: list[FileResult]
    roots: list[Path]


def discover(paths: Iterable[Path]) -> _Discovery:
    """Expand folders (skipping hidden entries); name paths that do not exist."""
    files: list[Path] = []
    problems: list[FileResult] = []
    roots: list[Path] = []
    for raw in paths:
        path = raw.expanduser().resolve()
        if not path.exists():
            reason = f"no such file or folder (check the path; relative to {Path.cwd()})"
            problems.append(FileResult(str(raw), Status.FAILED, reason=reason))
        elif path.is_dir():
            roots.append(path)
            for child in sorted(path.rglob("*")):
                rel = child.relative_to(path)
                if any(part.startswith(".") for part in rel.parts) or not child.is_file():
                    continue
                if is_supported(child):
                    files.append(child)
                else:
                    problems.append(
                        FileResult(
                            str(child), Status.IGNORED, reason=f"unsupported type '{child.suffix}'"
                        )
                    )
        else:
            files.append(path)
    return _Discovery(list(dict.fromkeys(files)), problems, roots)


@dataclass(frozen=True)
class _Prepared:
    """A changed file, loaded and chunked, waiting for its vectors."""

    record: DocumentRecord
    chunks: list[Chunk]
    replaces: bool
    pairs: list[TermPair]
    notes: str = ""  # what the loader left out (scanned pages without OCR)


class _Batch:
    """Files whose chunks are embedded together, in a background thread."""

    def __init__(self, files: list[_Prepared], future: Future[Vectors]) -> None:
        self.files = files
        self.future = future


class Ingestor:
    """Ingests files in batches of about ``BATCH_CHUNKS`` chunks.

    While one batch is embedded (in worker processes when configured), the
    previous batch is written, and the next files are read and chunked, so the
    cores stay busy. Each document still switches versions on its own.
    """

    BATCH_CHUNKS = 256

    def __init__(self, kb: KnowledgeBase) -> None:
        self.kb = kb

    def run(
        self,
        paths: Iterable[Path],
        *,
        scope: str = DEFAULT_SCOPE,
        prune: bool = False,
        progress: ProgressCallback | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> IngestReport:
        """Ingest the files under ``paths``; ``stop`` as for :meth:`ingest` (a stopped run
        prunes nothing: the files it did not reach were not looked at)."""
        found = discover(paths)
        report = self.ingest(
            [file_item(p) for p in found.files],
            scope=scope,
            progress=progress,
            refresh=False,
            stop=stop,
        )
        report.results[:0] = found.problems
        if prune and not (stop is not None and stop()):
            report.results.extend(self._prune(found.roots, set(map(str, found.files))))
        self.kb.refresh_keyword_index()
        return report

    def ingest(
        self,
        items: Iterable[IngestItem | FileResult],
        *,
        scope: str = DEFAULT_SCOPE,
        progress: ProgressCallback | None = None,
        remove: Iterable[str] = (),
        refresh: bool = True,
        stop: Callable[[], bool] | None = None,
    ) -> IngestReport:
        """Ingest ``items`` (results a source already decided, such as "unchanged", pass
        through to the report), then remove the documents whose keys are in ``remove``.

        ``stop`` is polled between documents: when it says so, the run ends after the
        batch under way, and every document finished so far stays switched in.
        """
        scope = validate_scope(scope)
        report = IngestReport()
        self._collect_orphans()
        total = len(items) if isinstance(items, Sized) else 0
        waiting: list[_Prepared] = []
        in_flight: _Batch | None = None
        done = 0
        with ThreadPoolExecutor(1, thread_name_prefix="teamrag-embed") as embedding:

            def submit(files: list[_Prepared]) -> _Batch:
                texts = [c.text for f in files for c in f.chunks]
                return _Batch(files, embedding.submit(self.kb.embedder.embed_documents, texts))

            for item in items:
                if stop is not None and stop():
                    break
                if progress:
                    current = item.source if isinstance(item, IngestItem) else item.path
                    progress(current, done, total)
                done += 1
                outcome = item if isinstance(item, FileResult) else self._prepare(item, scope)
                if isinstance(outcome, FileResult):
                    report.results.append(outcome)
                    continue
                waiting.append(outcome)
                if sum(len(f.chunks) for f in waiting) >= self.BATCH_CHUNKS:
                    batch, waiting = submit(waiting), []
                    if in_flight is not None:
                        report.results.extend(self._write(in_flight))
                    in_flight = batch
            if in_flight is not None:
                report.results.extend(self._write(in_flight))
            if waiting:
                report.results.extend(self._write(submit(waiting)))
        if progress:
            progress("", done, max(total, done))
        report.results.extend(self.remove(remove))
        if refresh:
            self.kb.refresh_keyword_index()
        return report

    def remove(self, sources: Iterable[str]) -> list[FileResult]:
        """Take the documents with these catalog keys out of the catalog and the vectors."""
        results: list[FileResult] = []
        for source in sources:
            doc = self.kb.catalog.document_by_source(source)
            if doc is not None:
                self._delete_vectors(self.kb.catalog.remove_document(doc.doc_id))
                results.append(FileResult(source, Status.REMOVED, doc.n_chunks))
        return results

    def _prepare(self, item: IngestItem, run_scope: str) -> FileResult | _Prepared:
        """Read, compare and chunk one document: a result if there is nothing to embed."""
        source = item.source
        scope = validate_scope(item.scope) if item.scope is not None else run_scope
        try:
            data = item.read()
        except OSError as exc:
            return FileResult(source, Status.FAILED, reason=f"cannot read: {exc.strerror or exc}")
        content_hash = hashlib.sha256(data).hexdigest()
        existing = self.kb.catalog.document_by_source(source)
        if (
            existing is not None
            and existing.content_hash == content_hash
            and existing.scope == scope
            and existing.pipeline == self.kb.pipeline
        ):
            return FileResult(source, Status.UNCHANGED, existing.n_chunks)
        try:
            document = load_document(Path(item.name), data)
        except LoadError as exc:
            return FileResult(source, Status.FAILED, reason=str(exc))
        if item.title or item.link:
            document = replace(
                document, title=item.title or document.title, link=item.link or document.link
            )
        doc_id = document_id(source)
        chunks = chunk_document(
            document,
            doc_id=doc_id,
            source=source,
            content_hash=content_hash,
            scope=scope,
            config=self.kb.chunking,
        )
        if item.link_for is not None:
            link_for = item.link_for
            chunks = [replace(c, link=link_for(c.text) or c.link) for c in chunks]
        record = DocumentRecord(
            doc_id=doc_id,
            source=source,
            scope=scope,
            title=document.title,
            content_hash=content_hash,
            n_chunks=len(chunks),
            pipeline=self.kb.pipeline,
            ingested_at=0.0,
        )
        # Bilingual term pairs the document writes down (agent/glossary/mine.py).
        pairs = mine_pairs(document)
        replaces = existing is not None
        return _Prepared(record, chunks, replaces, pairs=pairs, notes=document.notes)

    def _write(self, batch: _Batch) -> list[FileResult]:
        """Store a batch's vectors, then switch each of its documents in the catalog."""
        chunks = [c for f in batch.files for c in f.chunks]
        try:
            vectors = batch.future.result()
            # Vectors first, catalog second: until the catalog switches, search keeps
            # serving the old version and ignores the new vectors.
            self.kb.catalog.mark_pending([c.chunk_id for c in chunks])
            self.kb.vectors.add(chunks, vectors)
        except (EmbeddingError, VectorStoreError) as exc:
            return [
                FileResult(f.record.source, Status.FAILED, reason=str(exc)) for f in batch.files
            ]
        results: list[FileResult] = []
        for f in batch.files:
            stale = self.kb.catalog.replace_document(
                f.record,
                f.chunks,
                [tokenize(c.text) for c in f.chunks],
                # Per-chunk language lets hybrid search protect cross-language answers
                # (fusion.py); a regex count, under 1 % of the embedding time.
                [detect_language(c.text) for c in f.chunks],
                f.pairs,
            )
            self._delete_vectors(stale)
            status = Status.UPDATED if f.replaces else Status.ADDED
            results.append(FileResult(f.record.source, status, len(f.chunks), f.notes))
        return results

    def _prune(self, roots: list[Path], present: set[str]) -> list[FileResult]:
        results: list[FileResult] = []
        for doc in self.kb.catalog.documents():
            path = Path(doc.source)
            under_root = any(path.is_relative_to(root) for root in roots)
            if under_root and doc.source not in present and not path.exists():
                self._delete_vectors(self.kb.catalog.remove_document(doc.doc_id))
                results.append(FileResult(doc.source, Status.REMOVED, doc.n_chunks))
        return results

    def _delete_vectors(self, chunk_ids: list[str]) -> None:
        # The catalog recorded them as pending when it switched them out. On failure,
        # search ignores them (the catalog does not list them) and the next run retries.
        with contextlib.suppress(VectorStoreError):
            self.kb.vectors.delete(chunk_ids)
            self.kb.catalog.clear_pending(chunk_ids)

    def _collect_orphans(self) -> None:
        """Delete vectors left behind by an interrupted run (listed in no catalog version)."""
        orphans = self.kb.catalog.orphaned_vectors()
        if orphans:
            self._delete_vectors(orphans)
