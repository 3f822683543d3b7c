"""The dense side: a Chroma collection of chunk vectors with the metadata filters need.

Chroma runs embedded (``PersistentClient`` in the data folder) by default and
as a server (``HttpClient``) when ``CHROMA_URL`` is set. We always pass our own
vectors: Chroma's default embedding function downloads a model, which fails
offline.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from agent.retrieval.embeddings import Vectors
from agent.retrieval.types import Chunk


class VectorStoreError(Exception):
    """The vector store failed; the message names the cause and the fix."""


def _metadata(chunk: Chunk) -> dict[str, Any]:
    # Chroma metadata values may not be None, so absent fields are left out.
    meta: dict[str, Any] = {
        "doc_id": chunk.doc_id,
        "scope": chunk.scope,
        "seq": chunk.seq,
        "source": chunk.source,
        "title": chunk.title,
    }
    if chunk.page is not None:
        meta["page"] = chunk.page
    return meta


class VectorStore:
    def __init__(self, client: Any, collection: str, where: str) -> None:
        self._client = client
        self._where = where
        try:
            self._collection = client.get_or_create_collection(
                collection, embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
            )
            self._max_batch = int(client.get_max_batch_size())
        except Exception as exc:
            raise self._error("cannot open the collection", exc) from exc

    @classmethod
    def embedded(cls, path: Path, collection: str) -> VectorStore:
        import chromadb
        from chromadb.config import Settings

        path.mkdir(parents=True, exist_ok=True)
        client = chromadb.PersistentClient(
            path=str(path), settings=Settings(anonymized_telemetry=False)
        )
        return cls(client, collection, where=f"embedded Chroma at {path}")

    @classmethod
    def remote(cls, url: str, collection: str) -> VectorStore:
        import chromadb
        from chromadb.config import Settings

        parsed = urlparse(url if "://" in url else f"http://{url}")
        try:
            client = chromadb.HttpClient(
                host=parsed.hostname or "localhost",
                port=parsed.port or (443 if parsed.scheme == "https" else 8000),
                ssl=parsed.scheme == "https",
                settings=Settings(anonymized_telemetry=False),
            )
        except Exception as exc:
            raise VectorStoreError(
                f"CHROMA_URL unreachable: {url} ({exc}); start the server "
                "(`chroma run --path DIR`) or unset CHROMA_URL to use the embedded store"
            ) from exc
        return cls(client, collection, where=f"Chroma server at {url}")

    def close(self) -> None:
        """Release the client: an embedded store's SQLite files and threads, a server's
        HTTP pool. Chroma counts the clients of one path, so a store still open on the
        same folder keeps working. Without it every closed knowledge base kept its files
        open, and a long test run hit the open-files limit."""
        self._client.close()

    def _error(self, action: str, exc: Exception) -> VectorStoreError:
        return VectorStoreError(f"{self._where}: {action}: {type(exc).__name__}: {exc}")

    def add(self, chunks: Sequence[Chunk], vectors: Vectors) -> None:
        for start in range(0, len(chunks), self._max_batch):
            part = chunks[start : start + self._max_batch]
            try:
                self._collection.upsert(
                    ids=[c.chunk_id for c in part],
                    embeddings=vectors[start : start + len(part)],
                    metadatas=[_metadata(c) for c in part],
                )
            except Exception as exc:
                raise self._error("cannot store vectors", exc) from exc

    def delete(self, chunk_ids: Sequence[str]) -> None:
        for start in range(0, len(chunk_ids), self._max_batch):
            try:
                self._collection.delete(ids=list(chunk_ids[start : start + self._max_batch]))
            except Exception as exc:
                raise self._error("cannot delete vectors", exc) from exc

    def count(self) -> int:
        return int(self._collection.count())

    def query(
        self, vector: Vectors, k: int, scopes: frozenset[str] | None = None
    ) -> list[tuple[str, float]]:
        """Top ``k`` chunks by cosine similarity, within ``scopes`` when given."""
        return self.query_many(vector.reshape(1, -1), k, scopes)[0]

    def query_many(
        self,
        vectors: Vectors,
        k: int,
        scopes: frozenset[str] | None = None,
        documents: frozenset[str] | None = None,
    ) -> list[list[tuple[str, float]]]:
        """:meth:`query` for each row of ``vectors``, in one request to the store (a
        turn's search variations: one round trip to a Chroma server, not one each);
        within ``scopes`` and ``documents`` (ids) when given."""
        if k <= 0 or len(vectors) == 0:
            return [[] for _ in range(len(vectors))]
        where: dict[str, Any] | None = None
        conditions: list[dict[str, Any]] = []
        if scopes is not None:
            conditions.append({"scope": {"$in": sorted(scopes)}})
        if documents is not None:
            conditions.append({"doc_id": {"$in": sorted(documents)}})
        if conditions:
            where = conditions[0] if len(conditions) == 1 else {"$and": conditions}
        try:
            result = self._collection.query(
                query_embeddings=vectors.tolist(),
                n_results=k,
                where=where,
                include=["distances"],
            )
        except Exception as exc:
            raise self._error("search failed", exc) from exc
        distances = result.get("distances") or [[] for _ in result["ids"]]
        # Equal distances (the same text in two documents) come back in an order that
        # changes from one process to the next; by id, the same question gets the same
        # passages on every worker.
        return [
            sorted(
                ((cid, 1.0 - float(d)) for cid, d in zip(ids, row, strict=True)),
                key=lambda hit: (-hit[1], hit[0]),
            )
            for ids, row in zip(result["ids"], distances, strict=True)
        ]
