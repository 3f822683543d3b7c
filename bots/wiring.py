"""The composition root: build the agent's parts from :class:`Settings`.

Nothing in ``agent/`` reads the environment; this module and :mod:`bots.parts` (the
embedder, the vector store and the catalog) are where a process's parts are decided.
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
from agent.coordination.redis_connection import RedisConnection
from agent.deps import Deps
from agent.graph import build_graph
from agent.llm.calls import LLMs, openai_llms
from agent.memory.backends import open_checkpointer, open_store
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.runner import Runner
from agent.websearch.duckduckgo import DuckDuckGoSearch
from agent.websearch.tavily import TavilySearch
from bots.parts import build_embedder as build_embedder
from bots.parts import build_knowledge_base as build_knowledge_base
from bots.parts import parts_in_use as parts_in_use
from bots.settings import Settings
from bots.shared_state import (
    answer_cache,
    deduper,
    open_redis,
    rate_limiter,
    shared_feedback_store,
    thread_locks,
    turn_queues,
    usage_store,
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
    settings: Settings, kb: KnowledgeBase, redis: RedisConnection | None = None
) -> AsyncIterator[Runner]:
    """The agent on the configured parts: thread memory, user memory, cache, LLM, web;
    the cache and the thread locks shared through ``redis`` when there is one."""
    config = agent_config(settings)
    cache, cache_file = answer_cache(settings, config, redis)
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
            locks = thread_locks(settings, redis)
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
    async with open_redis(settings) as redis:
        feedback = shared_feedback_store(settings, redis)
        usage = usage_store(settings, redis)
        metrics = Metrics()
        try:
            async with open_runner(settings, kb, redis) as runner:
                await runner.warm_up()  # the first user should not pay for loading the encoder
                run = observed(runner.run, [usage.record, metrics.observe])
                try:
                    yield ChatServices(
                        run=run,
                        feedback=feedback,
                        dedupe=deduper(redis),
                        rules=rules,
                        update_interval_s=settings.chat_update_interval_s,
                        limiter=rate_limiter(settings, redis),
                        metrics=metrics,
                        queue_for=turn_queues(settings, redis),
                        redis=redis,
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
