"""The composition root: build the agent's parts from :class:`Settings`.

Nothing in ``agent/`` reads the environment; this is the one place that
decides which embedder and which vector store a process uses.
"""

from __future__ import annotations

from agent.retrieval.chunking import ChunkingConfig
from agent.retrieval.embeddings import Embedder, OpenAICompatibleEmbedder, UniversalSentenceEncoder
from agent.retrieval.knowledge_base import KnowledgeBase, collection_name
from agent.retrieval.vectors import VectorStore
from bots.settings import Settings


def build_embedder(settings: Settings) -> Embedder:
    if settings.embeddings == "openai":
        return OpenAICompatibleEmbedder(
            settings.embeddings_model,
            base_url=settings.openai_base_url,
            api_key=settings.openai_api_key,
        )
    return UniversalSentenceEncoder(
        threads=settings.embed_threads, processes=settings.embed_processes
    )


def build_knowledge_base(settings: Settings) -> KnowledgeBase:
    embedder = build_embedder(settings)
    name = collection_name(embedder.name)
    if settings.chroma_url:
        vectors = VectorStore.remote(settings.chroma_url, name)
    else:
        vectors = VectorStore.embedded(settings.data_dir / "chroma", name)
    return KnowledgeBase(
        settings.data_dir,
        embedder,
        vectors,
        ChunkingConfig(size=settings.chunk_size, overlap=settings.chunk_overlap),
    )
