"""The knowledge base: catalog + vectors + keyword index behind one search call.

Search is hybrid by default: BM25 finds passages that reuse the question's
words (strong for same-language questions), the multilingual encoder finds
passages that mean the same thing in any language, and :mod:`fusion` merges
the two. Everything here is synchronous and CPU bound; async callers use
:meth:`KnowledgeBase.asearch`, which runs it in a worker thread.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent.glossary.cache import GlossaryCache
from agent.glossary.glossary import Glossary
from agent.glossary.mine import MINER_VERSION
from agent.retrieval.catalog import DocumentCatalog, SharedKeywords, open_catalog
from agent.retrieval.chunking import CHUNKER_VERSION, ChunkingConfig
from agent.retrieval.embeddings import Embedder, word_similarity
from agent.retrieval.fusion import fuse
from agent.retrieval.keyword import KeywordIndex
from agent.retrieval.keyword_live import LiveKeywordIndex
from agent.retrieval.loaders import LOADERS_VERSION
from agent.retrieval.pointers import Named, document_names
from agent.retrieval.tokenizer import TOKENIZER_VERSION, tokenize, words
from agent.retrieval.types import Chunk, SearchHit
from agent.retrieval.vectors import VectorStore
from agent.wording.language import detect_language

log = logging.getLogger(__name__)

SearchMode = Literal["hybrid", "dense", "keyword"]
CANDIDATES = 50
# Chunk languages remembered per process (about 100 bytes each); past this, start over.
LANGUAGES_KEPT = 200_000
KEYWORD_REFRESH_S = 10.0
# How long a host's shared keyword index is taken as current without asking Postgres for
# changes: a turn's searches share one check, and another host's ingest (seconds long)
# is searchable here within this much of its commit.
SHARED_KEYWORD_CHECK_S = 0.5
# A question word's counterpart in the other language (agent/glossary) adds its BM25 score
# at this share: below the question's own words, which say exactly what was asked.
COUNTERPART_WEIGHT = 0.5


def collection_name(embedder_name: str) -> str:
    """One Chroma collection per vector space, so switching embedders never mixes them."""
    return "teamrag-" + re.sub(r"[^a-zA-Z0-9_-]+", "-", embedder_name).strip("-")[:60]


@dataclass(frozen=True)
class SearchOptions:
    k: int = 5
    scopes: frozenset[str] | None = None
    mode: SearchMode = "hybrid"
    neighbours: int = 1
    # Queries that all say the same thing in other words (a question's paraphrases and its
    # translation) share this text's vector: the multilingual encoder puts them at one
    # meaning, and what differs, their words, is the keyword side's job. One embedding
    # and one vector read serve them all (see search_many).
    meaning: str | None = None
    # Only these documents (ids): the ones a passage points to (agent/retrieval/pointers.py).
    documents: frozenset[str] | None = None


class KnowledgeBase:
    def __init__(
        self,
        data_dir: Path,
        embedder: Embedder,
        vectors: VectorStore,
        chunking: ChunkingConfig | None = None,
        catalog: DocumentCatalog | None = None,
        glossary_file: Path | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.embedder = embedder
        self.vectors = vectors
        self.chunking = chunking or ChunkingConfig()
        # A SQLite file in the data folder (embedded), or a Postgres schema shared by every
        # host (DATABASE_URL): one interface either way.
        self.catalog: DocumentCatalog = catalog or open_catalog(data_dir)
        self._live: LiveKeywordIndex | None = None
        self._live_checked_at = 0.0
        self._keyword_dir = data_dir / "keyword"
        self._keyword: KeywordIndex | None = None
        self._keyword_lock = threading.Lock()
        # Read and written by searches on several threads: each dict step is atomic, and
        # a lost update only costs a query again.
        self._language_of: dict[str, str] = {}
        self._keyword_loaded_at = 0.0
        # Term pairs live in the catalog, so every host sharing it shares them.
        self.glossaries = GlossaryCache(self.catalog, glossary_file, word_similarity(embedder))
        self._names: tuple[int, list[Named]] | None = None

    @property
    def pipeline(self) -> str:
        """Everything that shapes a document's chunks and the term pairs mined from it; a
        change re-ingests unchanged files."""
        c = self.chunking
        return (
            f"{self.embedder.name}|chunks{c.size}/{c.overlap}v{CHUNKER_VERSION}"
            f"|tokens{TOKENIZER_VERSION}"
            f"|loaders{LOADERS_VERSION}"
            f"|pairs{MINER_VERSION}"
        )

    def close(self) -> None:
        self.catalog.close()
        self.embedder.close()
        self.vectors.close()

    # -- keyword index freshness ---------------------------------------------
    def keyword_index(self, *, fresh: bool = False) -> KeywordIndex | LiveKeywordIndex:
        """The BM25 index for the catalog's current generation (loaded or rebuilt as needed).

        Another process (the ``ingest`` CLI next to a running bot) may be changing
        the catalog, one document at a time. Searches then keep using the index
        they have for up to ``KEYWORD_REFRESH_S`` seconds instead of rebuilding it
        after every document: a stale index only misses the newest chunks (dense
        search still finds them), and chunks it lists that are gone are dropped
        by the catalog lookup. ``fresh`` forces the current generation.
        """
        if isinstance(self.catalog, SharedKeywords):
            return self._shared_keyword_index(self.catalog, fresh=fresh)
        generation = self.catalog.generation
        with self._keyword_lock:
            current = self._keyword
            if current is not None and current.generation == generation:
                return current
            # The ingest command saves the index when it finishes: take that if it is current.
            index = None
            if KeywordIndex.saved_generation(self._keyword_dir) == generation:
                index = KeywordIndex.load(self._keyword_dir)
            recent = time.monotonic() - self._keyword_loaded_at < KEYWORD_REFRESH_S
            if index is None and current is not None and recent and not fresh:
                return current
            if index is None or index.generation != generation:
                index = KeywordIndex.build(
                    self.catalog.keyword_rows(), self.catalog.term_count(), generation
                )
                index.save(self._keyword_dir)
            self._keyword = index
            self._keyword_loaded_at = time.monotonic()
            return index

    def _shared_keyword_index(
        self, catalog: SharedKeywords, *, fresh: bool = False
    ) -> LiveKeywordIndex:
        """Other hosts change the shared catalog at any time: a search asks for the
        changes since the generation the index reflects (one indexed query when there
        are none) and applies them, so an ingest anywhere is searchable at once: at most
        ``SHARED_KEYWORD_CHECK_S`` after it, as searches that close together share a
        check (``fresh``: ask now, as after this host's own ingest)."""
        with self._keyword_lock:
            now = time.monotonic()
            recent = now - self._live_checked_at < SHARED_KEYWORD_CHECK_S
            if self._live is not None and recent and not fresh:
                return self._live
            self._live_checked_at = now
            if self._live is None:
                generation, rows = catalog.keyword_snapshot()
                self._live = LiveKeywordIndex(rows, generation)
            else:
                changes = catalog.keyword_changes(self._live.generation)
                if changes is None:  # too far behind: the removals it missed were pruned
                    log.info("the keyword index fell behind the catalog's kept changes; "
                             "reloading it")  # fmt: skip
                    generation, rows = catalog.keyword_snapshot()
                    self._live = LiveKeywordIndex(rows, generation)
                elif changes[0] != self._live.generation:
                    self._live.apply(changes[1], changes[2], changes[0])
            return self._live

    def refresh_keyword_index(self) -> None:
        self.keyword_index(fresh=True)

    def glossary(self) -> Glossary:
        """The bilingual term pairs in use (mined from the documents, the team's file)."""
        return self.glossaries.get()

    # -- search ---------------------------------------------------------------
    def search(self, query: str, options: SearchOptions | None = None) -> list[SearchHit]:
        return self.search_many([query], options)[0]

    def search_many(
        self, queries: Sequence[str], options: SearchOptions | None = None
    ) -> list[list[SearchHit]]:
        """:meth:`search` for each query, reading the stores once for all of them: a
        turn searches its question's variations together, and with a team's Chroma
        server and Postgres catalog each read is a round trip (five per query before)."""
        opts = options or SearchOptions()
        texts = [q.strip() for q in queries]
        asked = [i for i, text in enumerate(texts) if text]
        results: list[list[SearchHit]] = [[] for _ in texts]
        if not asked:
            return results
        pool = max(CANDIDATES, opts.k)
        # Within some documents: their chunks, from every chunk the keyword index ranks.
        within = self._chunks_of(opts.documents)
        keyword: dict[int, dict[str, float]] = {i: {} for i in asked}
        dense: dict[int, dict[str, float]] = {i: {} for i in asked}
        idf_sums = dict.fromkeys(asked, 0.0)
        # The question's words in the other language, scored apart (fusion.BRIDGE_WEIGHT).
        bridges: dict[int, dict[str, float]] = {i: {} for i in asked}
        bridge_idf_sums = dict.fromkeys(asked, 0.0)
        if opts.mode in ("hybrid", "keyword"):
            index = self.keyword_index()
            ranks = pool if within is None else len(index)
            tokens = {i: tokenize(texts[i]) for i in asked}
            extra = {i: self._counterpart_tokens(texts[i], tokens[i]) for i in asked}
            ids = iter(self.catalog.term_ids([t for i in asked for t in tokens[i] + extra[i]]))
            for i in asked:
                terms = [next(ids) for _ in tokens[i]]
                scored = _only(index.search(terms, ranks, opts.scopes), within)
                others = [next(ids) for _ in extra[i]]
                bridged = _only(index.search(others, ranks, opts.scopes), within) if others else {}
                for cid, score in bridged.items():
                    scored[cid] = scored.get(cid, 0.0) + COUNTERPART_WEIGHT * score
                keyword[i] = dict(sorted(scored.items(), key=lambda kv: -kv[1])[:pool])
                idf_sums[i] = index.query_idf_sum(terms)
                if others:
                    bridges[i] = bridged
                    bridge_idf_sums[i] = index.query_idf_sum(others)
        if opts.mode in ("hybrid", "dense") and opts.meaning:
            vector = self.embedder.embed_queries([opts.meaning])
            shared = dict(self.vectors.query_many(vector, pool, opts.scopes, opts.documents)[0])
            dense = dict.fromkeys(asked, shared)
        elif opts.mode in ("hybrid", "dense"):
            vectors = self.embedder.embed_queries([texts[i] for i in asked])
            found_many = self.vectors.query_many(vectors, pool, opts.scopes, opts.documents)
            for i, found in zip(asked, found_many, strict=True):
                dense[i] = dict(found)
        ranked: dict[int, list[tuple[str, float]]] = {}
        for i in asked:
            if opts.mode == "keyword":
                ranked[i] = list(keyword[i].items())
            elif opts.mode == "dense":
                ranked[i] = list(dense[i].items())
            else:
                # Chunk languages let the fusion keep other-language answers for
                # cross-language questions in a mixed Korean/English index (fusion.py).
                ranked[i] = fuse(
                    keyword[i],
                    dense[i],
                    query_idf_sum=idf_sums[i],
                    query_language=detect_language(texts[i]),
                    languages=self._languages(
                        keyword[i].keys() | dense[i].keys() | bridges[i].keys()
                    ),
                    bridged=bridges[i],
                    bridged_idf_sum=bridge_idf_sums[i],
                )
            # Over-fetch: vectors of a version the catalog no longer lists are skipped below.
            ranked[i] = ranked[i][: opts.k * 2 + 10]
        chunks = self.catalog.chunks({cid for i in asked for cid, _ in ranked[i]})
        picked = {i: self._pick(ranked[i], chunks, opts) for i in asked}
        unique = {c.chunk_id: c for i in asked for c, _ in picked[i]}
        around = (
            self.catalog.neighbours_of(list(unique.values()), opts.neighbours)
            if opts.neighbours
            else {}
        )
        for i in asked:
            results[i] = [
                SearchHit(
                    chunk,
                    score,
                    keyword[i].get(chunk.chunk_id, 0.0),
                    dense[i].get(chunk.chunk_id, 0.0),
                    around.get(chunk.chunk_id, []),
                )
                for chunk, score in picked[i]
            ]
        return results

    def _chunks_of(self, documents: frozenset[str] | None) -> set[str] | None:
        if documents is None:
            return None
        return {c.chunk_id for doc_id in documents for c in self.catalog.document_chunks(doc_id)}

    def document_names(self) -> list[Named]:
        """The words each document can be named by (agent/retrieval/pointers.py), for the
        catalog's current generation."""
        generation = self.catalog.generation
        cached = self._names
        if cached is not None and cached[0] == generation:
            return cached[1]
        names = document_names((d.doc_id, d.source, d.title) for d in self.catalog.documents())
        self._names = (generation, names)
        return names

    def _counterpart_tokens(self, text: str, tokens: list[str]) -> list[str]:
        """The keyword tokens of the question's words in the other language, that the
        question does not hold itself."""
        found = self.glossary().counterparts(words(text), sounded=True)
        own = set(tokens)
        extra = tokenize(" ".join(w for ws in found.values() for w in ws))
        return [t for t in dict.fromkeys(extra) if t not in own]

    @staticmethod
    def _pick(
        ranked: list[tuple[str, float]], chunks: dict[str, Chunk], opts: SearchOptions
    ) -> list[tuple[Chunk, float]]:
        """The first ``opts.k`` ranked chunks the catalog still lists, within the scopes."""
        picked: list[tuple[Chunk, float]] = []
        for cid, score in ranked:
            chunk = chunks.get(cid)
            if chunk is None or (opts.scopes is not None and chunk.scope not in opts.scopes):
                continue
            picked.append((chunk, score))
            if len(picked) == opts.k:
                break
        return picked

    def _languages(self, chunk_ids: set[str]) -> dict[str, str]:
        """Each chunk's language, remembered: a chunk id names its text (document, content
        hash, position), so its language never changes, and a team's catalog is a server
        round trip away on every search."""
        missing = chunk_ids - self._language_of.keys()
        if missing:
            if len(self._language_of) > LANGUAGES_KEPT:
                self._language_of.clear()
            found = self.catalog.chunk_languages(missing)
            self._language_of.update({cid: found.get(cid, "") for cid in missing})
        return {cid: lang for cid in chunk_ids if (lang := self._language_of.get(cid, ""))}

    def keyword_match(self, query: str, scopes: frozenset[str] | None = None) -> float:
        """How much of ``query`` one chunk contains, in [0, 1]: the IDF-weighted share of
        its distinct terms found in the best chunk (:meth:`KeywordIndex.coverage`).

        One pass over the keyword index, no embedding: cheap enough to ask before a message
        is answered as smalltalk. A rare name or term the documents use pushes it up;
        words every document has ("name", "이름") barely count.
        """
        index = self.keyword_index()
        return index.coverage(self.catalog.term_ids(tokenize(query)), scopes)

    def meaning_match(self, query: str, scopes: frozenset[str] | None = None) -> float:
        """The encoder's best cosine between ``query`` and one chunk: how close the documents
        come to it in meaning, in whatever language (:meth:`keyword_match` cannot see a
        translation). One vector read; the query's vector is remembered for its search."""
        text = query.strip()
        if not text:
            return 0.0
        found = self.vectors.query(self.embedder.embed_query(text), 1, scopes)
        return found[0][1] if found else 0.0

    async def asearch(self, query: str, options: SearchOptions | None = None) -> list[SearchHit]:
        return await asyncio.to_thread(self.search, query, options)


def _only(ranked: list[tuple[str, float]], within: set[str] | None) -> dict[str, float]:
    return dict(ranked) if within is None else {c: s for c, s in ranked if c in within}
