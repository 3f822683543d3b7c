"""The baseline for ``agent_latency.py``: the seeds' order, one LLM call per node, in sequence.

A straightforward implementation of the seed workflow, written the obvious way: every
node that needs a model makes its own call and the next node waits for it.

    input guard -> router -> [context enhancement] -> planner -> retrieval -> rerank
    -> sufficiency judge -> generate -> hallucination check -> answer grade -> output guard

Smalltalk is the router call and then a direct answer call. It uses the same knowledge
base search (``KnowledgeBase.asearch``), the same OpenAI client and the same fake server
as the agent, so the difference measured is the shape of the workflow and nothing else.
No cache, no sufficiency loop (the judge is scripted to say "enough"), no retries.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal, TypeVar

from langchain_core.messages import AIMessageChunk, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from agent.events import Event, Final, Progress, Token
from agent.guards import check_input, check_output
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.retrieval.types import SearchHit
from agent.wording.language import detect_language

T = TypeVar("T", bound=BaseModel)


class NaiveRoute(BaseModel):
    route: Literal["knowledge", "smalltalk"]
    confidence: float


class NaiveStandalone(BaseModel):
    question: str


class NaivePlan(BaseModel):
    queries: list[str]


class NaiveRerank(BaseModel):
    ranking: list[int]


class NaiveSufficiency(BaseModel):
    score: float
    missing: list[str]


class NaiveGroundedness(BaseModel):
    grounded: bool
    score: float


class NaiveGrade(BaseModel):
    answers_question: bool
    score: float


def script(fake: Any, route: str, question: str, variations: Sequence[str], answer: str) -> None:
    """Script the fake server's replies for one naive turn (``fake`` is a FakeOpenAI)."""
    fake.reply("NaiveRoute", {"route": route, "confidence": 0.95})
    fake.reply("NaiveStandalone", {"question": question})
    fake.reply("NaivePlan", {"queries": [question, *variations]})
    fake.reply("NaiveRerank", {"ranking": [1, 2, 3]})
    fake.reply("NaiveSufficiency", {"score": 0.9, "missing": []})
    fake.reply("NaiveGroundedness", {"grounded": True, "score": 0.95})
    fake.reply("NaiveGrade", {"answers_question": True, "score": 0.95})
    fake.reply("text", answer)


def _passages(hits: Sequence[SearchHit]) -> str:
    return "\n\n".join(
        f"[{n}] {hit.chunk.title}\n{hit.context_text()}" for n, hit in enumerate(hits, 1)
    )


class NaivePipeline:
    def __init__(self, kb: KnowledgeBase, base_url: str, *, k: int = 6, evidence: int = 8) -> None:
        self.kb = kb
        self.k = k
        self.evidence = evidence
        common: dict[str, Any] = {
            "base_url": base_url,
            "api_key": "test",
            "timeout": 5.0,
            "max_retries": 0,
            "stream_usage": True,
        }
        self.fast = ChatOpenAI(model="fast-model", temperature=0.0, **common)
        self.chat = ChatOpenAI(model="chat-model", temperature=0.2, **common)
        self.calls = 0

    async def _ask(self, schema: type[T], system: str, user: str) -> T:
        self.calls += 1
        runnable = self.fast.with_structured_output(schema, method="json_schema")
        out = await runnable.ainvoke([SystemMessage(system), HumanMessage(user)])
        assert isinstance(out, schema)
        return out

    async def _stream(self, system: str, user: str) -> AsyncIterator[str]:
        self.calls += 1
        async for chunk in self.chat.astream([SystemMessage(system), HumanMessage(user)]):
            if isinstance(chunk, AIMessageChunk) and chunk.text:
                yield chunk.text

    async def run(self, text: str, history: Sequence[str] = ()) -> AsyncIterator[Event]:
        start = time.perf_counter()
        self.calls = 0
        language = detect_language(text)
        verdict = check_input(text, language=language)
        if verdict.blocked:
            yield self._final(verdict.message or "", "blocked", language, start)
            return
        yield Progress("analyze", "Analyzing the question…")
        route = await self._ask(NaiveRoute, "Classify the message.", text)
        if route.route == "smalltalk":
            answer = ""
            async for piece in self._stream("Reply briefly and kindly.", text):
                answer += piece
                yield Token(piece)
            yield self._final(answer, "smalltalk", language, start)
            return
        question = text
        if history:
            yield Progress("rewrite", "Using the thread to rephrase…")
            context = "\n".join(history)
            rewritten = await self._ask(
                NaiveStandalone, "Rewrite as a standalone question.", f"{context}\n\n{text}"
            )
            question = rewritten.question
        yield Progress("plan", "Planning the search…")
        plan = await self._ask(NaivePlan, "Write search queries for the question.", question)
        yield Progress("search", "Searching the documents…")
        hits: dict[str, SearchHit] = {}
        for query in dict.fromkeys([question, *plan.queries]):
            for hit in await self.kb.asearch(query, SearchOptions(k=self.k)):
                hits.setdefault(hit.chunk.chunk_id, hit)
        pool = sorted(hits.values(), key=lambda h: h.score, reverse=True)[:12]
        yield Progress("rerank", "Ranking the passages…")
        listed = f"{question}\n\n{_passages(pool)}"
        ranked = await self._ask(NaiveRerank, "Rank the passages.", listed)
        order = [n for n in dict.fromkeys(ranked.ranking) if 0 < n <= len(pool)]
        pool = [pool[n - 1] for n in order] + [h for i, h in enumerate(pool, 1) if i not in order]
        evidence = _passages(pool[: self.evidence])
        yield Progress("judge", "Checking whether the sources are enough…")
        await self._ask(NaiveSufficiency, "Is this enough?", f"{question}\n\n{evidence}")
        yield Progress("write", "Writing the answer…")
        answer = ""
        async for piece in self._stream("Answer from the passages with [n].", evidence):
            answer += piece
            yield Token(piece)
        yield Progress("check", "Checking the answer against the sources…")
        checked = f"{question}\n\n{evidence}\n\nAnswer: {answer}"
        await self._ask(NaiveGroundedness, "Is every claim supported?", checked)
        await self._ask(NaiveGrade, "Does the answer address the question?", checked)
        if check_output(answer) != "pass":
            answer = "Sorry, no answer."
        yield self._final(answer, "knowledge", language, start)

    def _final(self, answer: str, route: Any, language: str, start: float) -> Final:
        return Final(
            answer=answer,
            route=route,
            language=language,
            mode="llm",
            llm_calls=self.calls,
            timings={"total": round((time.perf_counter() - start) * 1000, 2)},
        )
