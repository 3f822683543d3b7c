"""Seed 004's INTENT_MODEL_MAP: the router's decision picks the model that answers.

The map (``AgentConfig.route_models``, from ``TEAMRAG_ROUTE_MODELS``) is keyed by route,
or by ``route:complexity`` for a finer choice ("knowledge:complex": "gpt-4o"). A route
it does not name keeps the usual split: the fast model for smalltalk and general replies
(the routing call writes them, so they cost no extra trip), the chat model for the rest.
"""

from __future__ import annotations

from collections.abc import Mapping

from langchain_core.language_models import BaseChatModel

from agent.llm.calls import LLMs

# Routes whose reply the fast model writes by default (inside the routing call).
FAST_ROUTES = frozenset({"smalltalk", "general"})


def model_name_for(route_models: Mapping[str, str], route: str, complexity: str) -> str | None:
    """The mapped name for this route and complexity, or None when the map is silent."""
    return route_models.get(f"{route}:{complexity}") or route_models.get(route)


def model_for(
    llms: LLMs, route_models: Mapping[str, str], route: str, complexity: str
) -> tuple[BaseChatModel, str]:
    """The client and model name that answer this route."""
    name = model_name_for(route_models, route, complexity)
    if name is None:
        name = "fast" if route in FAST_ROUTES else "chat"
    return llms.named(name)
