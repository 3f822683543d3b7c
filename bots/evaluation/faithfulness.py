"""An LLM-judged faithfulness score, ragas-style: the share of an answer's claims that the
cited passages support. Only with an LLM configured; the extractive mode quotes, so every
claim is a copied sentence and the score would say nothing."""

from __future__ import annotations

import dataclasses

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from agent.events import Final
from agent.llm.calls import LLMError, structured
from agent.retrieval.knowledge_base import KnowledgeBase
from bots.evaluation.scoring import Row

_SYSTEM = (
    "You check an answer against its sources. Split the answer into its factual claims "
    "(ignore greetings, hedges and citation markers). For each claim say whether the "
    "sources state or directly imply it. Answer in JSON."
)
_SOURCE_CHARS = 6000


class Claim(BaseModel):
    claim: str
    supported: bool


class Claims(BaseModel):
    claims: list[Claim] = Field(default_factory=list)


class FaithfulnessJudge:
    def __init__(self, model: BaseChatModel, kb: KnowledgeBase) -> None:
        self._model = model
        self._kb = kb

    def _source_text(self, final: Final) -> str:
        parts = []
        for source in final.sources:
            chunks = self._kb.catalog.document_chunks(source.doc_id) if source.doc_id else []
            here = [c.text for c in chunks if c.locator() == source.locator] or [
                c.text for c in chunks
            ]
            parts.append(f"[{source.number}] {source.title}\n" + "\n".join(here))
        return "\n\n".join(parts)[:_SOURCE_CHARS]

    async def rate(self, row: Row, final: Final) -> Row:
        sources = self._source_text(final)
        if not sources.strip():
            return row
        messages = [
            SystemMessage(_SYSTEM),
            HumanMessage(f"Sources:\n{sources}\n\nAnswer:\n{final.answer}"),
        ]
        try:
            out, _usage = await structured(self._model, Claims, messages)
        except LLMError:
            return row  # a judge that fails leaves the question unscored, not wrong
        if not out.claims:
            return dataclasses.replace(row, faithfulness=1.0)
        supported = sum(1 for c in out.claims if c.supported)
        return dataclasses.replace(row, faithfulness=round(supported / len(out.claims), 3))
