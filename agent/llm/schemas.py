"""The structured replies the fast model gives (JSON schema output).

Three calls on the critical path of a knowledge answer, each merging what the
seeds split into several nodes:

- :class:`Analysis`: router + context enhancement + planner (+ user facts, and
  the direct reply for smalltalk so smalltalk costs one call);
- :class:`Review`: reranking + sufficiency judge;
- :class:`Verdict`: groundedness check + answer grade.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

RouteName = Literal[
    "smalltalk", "general", "knowledge", "analysis", "current_events", "tools", "memory", "creative"
]


class SubQuestionOut(BaseModel):
    id: int = Field(description="1, 2, 3... in the order they should be answered")
    question: str
    priority: int = Field(1, description="1 = most important")
    depends_on: list[int] = Field(
        default_factory=list, description="ids whose findings this sub-question needs first"
    )


class FiltersOut(BaseModel):
    source: str | None = Field(None, description="a file name the user named, else null")
    title: str | None = Field(None, description="a document title the user named, else null")
    page_from: int | None = None
    page_to: int | None = None


class FactOut(BaseModel):
    kind: Literal["team", "role", "product", "preference", "other"]
    text: str = Field(description="a short statement about the user, e.g. 'works on payments'")


class Analysis(BaseModel):
    route: RouteName
    confidence: float = Field(description="0..1, how sure the route is right")
    needs_history: bool = Field(description="true when the message only makes sense with history")
    standalone_question: str = Field(
        description="the message rewritten as a self-contained question, same language"
    )
    complexity: Literal["simple", "moderate", "complex"]
    reply: str = Field(description="only for smalltalk/general: the reply to send; otherwise empty")
    sub_questions: list[SubQuestionOut] = Field(
        description="1 for a simple question; 2-4 for analysis/comparison questions"
    )
    variations: list[str] = Field(
        description="3-5 search queries: paraphrases, keywords, and one translation into "
        "the other language (Korean<->English)"
    )
    answer_style: Literal["short", "normal", "detailed"]
    # Seed 002/004's query refiner, folded into this call: no extra round trip.
    web_query: str = Field(
        "", description="for web search: the message as a short keyword query; else ''"
    )
    filters: FiltersOut
    user_facts: list[FactOut] = Field(
        description="facts the user states about themselves in THIS message (team, role, "
        "product, preferences); empty when none"
    )


class Review(BaseModel):
    ranking: list[int] = Field(description="passage numbers, most relevant first; omit useless")
    sufficiency: float = Field(description="0..1, can the passages fully answer the question")
    missing_aspects: list[str] = Field(
        description="short search phrases for what the passages do not cover"
    )


class Verdict(BaseModel):
    grounded: bool = Field(description="every claim is supported by the numbered passages")
    grounded_score: float = Field(description="0..1")
    answers_question: bool
    answer_score: float = Field(description="0..1, how well the answer addresses the question")
    reason: str = Field(description="what is wrong, as an instruction for the rewrite; else ''")
    missing: list[str] = Field(
        default_factory=list,
        description="short search queries for facts the question needs that the passages lack; "
        "[] when the passages have everything",
    )
