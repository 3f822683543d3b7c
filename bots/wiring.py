"""The composition root: build the agent's parts from :class:`Settings`.

Nothing in ``agent/`` reads the environment; this is the one place that
decides which embedder and which vector store a process uses.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import fields
from typing import Any

from adapters.chat.channels import ChannelRules, load_channel_rules
from adapters.chat.metrics import Metrics
from adapters.chat.observe import observed
from adapters.chat.services import ChatServices, learner
from agent.config import AgentConfig, Features
from agent.deps import Deps
from agent.duckduckgo import DuckDuckGoSearch
from agent.graph import build_graph
from agent.llm import LLMs, openai_llms
from agent.memory.backends import open_checkpointer, open_store
from agent.retrieval.catalog_postgres import PostgresCatalog
from agent.retrieval.chunking import ChunkingConfig
from agent.retrieval.embeddings import Embedder, OpenAICompatibleEmbedder, UniversalSentenceEncoder
from agent.retrieval.knowledge_base import KnowledgeBase, collection_name
from agent.retrieval.vectors import VectorStore
from agent.runner import Runner
from agent.shared.link import RedisLink
from agent.websearch import TavilySearch
from bots.settings import Settings
from bots.shared_state import (
    answer_cache,
    deduper,
    open_link,
    rate_limiter,
    shared_feedback_store,
    thread_locks,
    turn_queues,
    usage_store,
)


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
    catalog = (
        PostgresCatalog(settings.database_url, settings.catalog_schema)
        if settings.database_url
        else None
    )
    return KnowledgeBase(
        settings.data_dir,
        embedder,
        vectors,
        ChunkingConfig(size=settings.chunk_size, overlap=settings.chunk_overlap),
        catalog=catalog,
        glossary_file=settings.glossary,
    )


def agent_config(settings: Settings) -> AgentConfig:
    """Settings and the agent's config share field names: copy the ones the agent has."""

    def shared(cls: type[Any]) -> dict[str, Any]:
        return {f.name: getattr(settings, f.name) for f in fields(cls) if hasattr(settings, f.name)}

    return AgentConfig(**shared(AgentConfig) | {"features": Features(**shared(Features))})


def build_llms(settings: Settings) -> LLMs | None:
    if not settings.llm_enabled:
        return None
    return openai_llms(
        fast_model=settings.fast_model,
        chat_model=settings.chat_model,
        base_url=settings.openai_base_url,
        api_key=settings.openai_api_key,
        timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
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


def build_web_search(settings: Settings) -> TavilySearch | DuckDuckGoSearch | None:
    """Off unless TEAMRAG_WEB_SEARCH is on (it sends questions outside); then Tavily when
    its key is set, else DuckDuckGo, which needs no key."""
    if not settings.web_search:
        return None
    if settings.web_search_api_key:
        return TavilySearch(settings.web_search_api_key, base_url=settings.web_search_url)
    return DuckDuckGoSearch(base_url=settings.duckduckgo_url)


@asynccontextmanager
async def open_runner(
    settings: Settings, kb: KnowledgeBase, link: RedisLink | None = None
) -> AsyncIterator[Runner]:
    """The agent on the configured parts: thread memory, user memory, cache, LLM, web;
    the cache and the thread locks shared through ``link`` when there is one."""
    config = agent_config(settings)
    cache, cache_file = answer_cache(settings, config, link)
    web = build_web_search(settings)
    memory_file = settings.data_dir / "memory.sqlite"
    try:
        async with (
            open_checkpointer(settings.database_url, memory_file) as checkpointer,
            open_store(settings.database_url, memory_file.with_name("user_memory.sqlite")) as store,
        ):
            llms = build_llms(settings)
            deps = Deps(
                kb=kb,
                config=config,
                llms=llms,
                cache=cache,
                web=web,
                persona=settings.persona,
            )
            locks = thread_locks(settings, link)
            runner = Runner(
                build_graph(checkpointer, store),
                deps,
                locks=locks,
                turn_timeout_s=settings.turn_timeout_s,
            )
            try:
                yield runner
            finally:
                await runner.wait_idle()
                if llms is not None:
                    await llms.aclose()
    finally:
        cache_file.close()
        if web is not None:
            await web.aclose()


@asynccontextmanager
async def open_chat_services(
    settings: Settings, kb: KnowledgeBase, rules: ChannelRules | None = None
) -> AsyncIterator[ChatServices]:
    """The agent plus what a chat bot keeps around it: channel rules, de-duplication,
    rate limits, the turn queue, usage and feedback records and metrics, each shared by
    every worker through Redis when ``REDIS_URL`` is set.

    Without ``rules`` they are read from the channels file (``ChannelRulesError`` before
    anything opens when it is wrong); an unreachable Redis raises ``RedisUnavailableError``.
    """
    if rules is None:
        rules = load_channel_rules(settings.channels_file, settings.channels)
    rules = rules.with_default_scope(settings.default_scope)
    async with open_link(settings) as link:
        feedback = shared_feedback_store(settings, link)
        usage = usage_store(settings, link)
        metrics = Metrics()
        try:
            async with open_runner(settings, kb, link) as runner:
                await runner.warm_up()  # the first user should not pay for loading the encoder
                run = observed(runner.run, [usage.record, metrics.observe])
                try:
                    yield ChatServices(
                        run=run,
                        feedback=feedback,
                        dedupe=deduper(link),
                        rules=rules,
                        update_interval_s=settings.chat_update_interval_s,
                        limiter=rate_limiter(settings, link),
                        metrics=metrics,
                        queue_for=turn_queues(settings, link),
                        link=link,
                        usage=usage,
                        learn=learner(kb),
                        documents=kb.catalog.documents,
                        forget=runner.forget,
                    )
                finally:
                    await run.drain()  # the records of the last answers
        finally:
            usage.close()
            feedback.close()
