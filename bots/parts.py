"""The knowledge base a process opens, and what ``teamrag status`` says of the other parts.

Apart from :mod:`bots.wiring` (the agent, the LLM and the chat services) so that the
commands that only read the knowledge base (``status``, ``search``, ``ingest``) do not
load LangGraph and LangChain to do it (benchmarks/cli_start.py).
"""

from __future__ import annotations

from dataclasses import fields

from agent.config import Features
from agent.retrieval.catalog import open_catalog
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
    # With DATABASE_URL the catalog (and so the keyword index) is shared by every host.
    catalog = open_catalog(settings.data_dir, settings.database_url, settings.catalog_schema)
    return KnowledgeBase(
        settings.data_dir,
        embedder,
        vectors,
        ChunkingConfig(size=settings.chunk_size, overlap=settings.chunk_overlap),
        catalog=catalog,
        glossary_file=settings.glossary,
    )


def parts_in_use(settings: Settings) -> list[str]:
    """One line per part of the agent: embedded or external, on or off (for `status`)."""
    if settings.llm_enabled:
        where = settings.openai_base_url or "api.openai.com"
        answers = f"LLM at {where} (fast: {settings.fast_model}, answers: {settings.chat_model})"
    else:
        answers = "extractive: quotes with citations, no LLM (set OPENAI_API_KEY to use one)"
    memory = "SQLite files in the data folder"
    if settings.database_url:
        memory = "Postgres (DATABASE_URL)"
    web = "off"
    if settings.web_search:
        web = "Tavily-compatible API" if settings.web_search_api_key else "DuckDuckGo (no key)"
    # Stages on by default that were switched off (web search has its own line).
    defaults = Features()
    off = [
        f.name
        for f in fields(Features)
        if f.name != "web_search"
        and getattr(defaults, f.name) is True
        and getattr(settings, f.name) is False
    ]
    return [
        f"answers: {answers}",
        f"thread and user memory: {memory}",
        f"web search: {web}",
        f"stages switched off: {', '.join(off) if off else 'none'}",
        f"slack: {_slack_mode(settings)}",
        "discord: " + ("token set" if settings.discord_token else "not set up (DISCORD_TOKEN)"),
        f"channel rules: {_channel_rules(settings)}",
        "shared state (rate limits, cache, de-duplication, locks, turn queue, records): "
        + (
            "Redis (REDIS_URL)"
            if settings.redis_url
            else "in this process and the data folder (set REDIS_URL for several workers)"
        ),
    ]


def _channel_rules(settings: Settings) -> str:
    if settings.channels_file:
        return str(settings.channels_file)
    if settings.channels:
        return "TEAMRAG_CHANNELS (inline)"
    return "none (answer everywhere, default scope)"


def _slack_mode(settings: Settings) -> str:
    if not settings.slack_bot_token:
        return "not set up (SLACK_BOT_TOKEN)"
    if settings.slack_app_token:
        return "Socket Mode (SLACK_APP_TOKEN)"
    return f"HTTP Events API on port {settings.slack_port}"
