"""Prompt texts. Korean and English are equals: answers follow the user's language.

Each function returns ready message lists, so nodes never assemble prompt
strings themselves and a prompt can be read in one place.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from agent.glossary.prompt_pairs import line
from agent.memory.budget import fit_texts
from agent.retrieval.types import TermPair
from agent.state import PoolItem

PERSONA = (
    "You are teamrag, the team's assistant in Slack and Discord. You answer questions from "
    "the team's own documents and cite them. Users write in Korean or English."
)

_ANSWER_RULES = {
    "ko": (
        "답변 규칙:\n"
        "- 한국어로 답하세요.\n"
        "- 아래 번호가 붙은 자료에 있는 내용만 사용하고, 문장마다 근거 자료 번호를 [1]처럼 붙이세요.\n"
        "- 자료가 질문을 다루지 않으면 지어내지 말고 그렇다고 분명히 말하세요.\n"
        "- 짧고 읽기 쉽게 쓰세요. 필요하면 목록을 쓰세요."
    ),
    "en": (
        "Answer rules:\n"
        "- Answer in English.\n"
        "- Use only the numbered passages below and cite them inline like [1] after each claim.\n"
        "- If the passages do not cover the question, say so plainly; never invent facts.\n"
        "- Be concise and easy to read; use a list when it helps."
    ),
}

# The team's glossary, for an answer in each language (agent/glossary/prompt_pairs.py).
_GLOSSARY_RULE = {
    "ko": (
        "팀 용어집 (한국어 = English): 이 용어는 팀이 쓰는 표기 그대로 쓰세요. "
        "한국어 답변에는 왼쪽 표기를, 영어 원문 용어를 함께 적을 때는 오른쪽 표기를 쓰세요."
    ),
    "en": (
        "Team glossary (Korean = English): write these terms exactly the way the team spells "
        "them. In an English answer use the right-hand side; when you add the Korean term, "
        "use the left-hand side."
    ),
}

_STYLE = {
    "short": "Keep it to two or three sentences.",
    "normal": "Keep it short: a few sentences or a short list.",
    "detailed": "Give a complete, structured answer.",
}


def _history_block(history: Sequence[BaseMessage], summary: str, budget: int) -> str:
    """The thread within its share of the token plan: the newest messages first, then
    the summary of older ones if there is room."""
    lines = []
    for message in reversed(history[-8:]):
        who = "User" if message.type == "human" else "Assistant"
        lines.append(f"{who}: {str(message.content)[:600]}")
    if summary:
        lines.append(f"Earlier in this thread (summary): {summary}")
    kept = fit_texts(lines, budget)
    return "\n".join(reversed(kept)) if kept else "(no earlier messages)"


def glossary_block(pairs: Sequence[TermPair], heading: str) -> str:
    return "\n".join([heading, *(line(p) for p in pairs)])


def passages_block(items: Sequence[PoolItem]) -> str:
    blocks = []
    for number, item in enumerate(items, start=1):
        where = f", {item['locator']}" if item["locator"] else ""
        blocks.append(f"[{number}] {item['title']}{where}\n{item['text']}")
    return "\n\n".join(blocks)


def analysis_messages(
    text: str,
    history: Sequence[BaseMessage],
    summary: str,
    profile: str,
    today: str,
    *,
    history_budget: int = 1200,
    persona: str = "",
    glossary: Sequence[TermPair] = (),
) -> list[BaseMessage]:
    """The routing and planning call. ``glossary``: the team's pairs the message names,
    so a translated variation searches the team's spelling; none leaves the prompt as it
    was, byte for byte."""
    # The persona shapes the smalltalk and general replies written here.
    system = f"""{persona or PERSONA}
Today is {today}.

Read the user's new message and plan how to answer it. Routes:
- smalltalk: greetings, thanks, "who are you", chit-chat. Write the reply (same language, friendly, one or two sentences; mention you answer from the team's documents).
- general: a general question that does not need the team's documents (e.g. a definition). Write a short reply.
- knowledge: a question about the team's documents, processes, policies, systems, how-to. The default for anything work-related.
- analysis: comparisons or multi-part questions; decompose into 2-4 sub-questions (use depends_on when one needs another's findings).
- current_events: news, weather, prices, anything that needs today's web.
- creative: the user asks you to write something: a draft, announcement, message, email, welcome note, translation ("슬랙 공지문 초안 써줘", "write a welcome message for the new on-call engineer"). Leave reply empty; a writer with tools drafts it.
- tools: arithmetic or the current date/time.
- memory: the user asks what you remember about them, or asks you to forget it.

If the message refers to earlier messages ("그건요?", "the second one?"), set needs_history and write standalone_question as a complete question using the history. Otherwise standalone_question is the message itself, cleaned up.
variations: 3-5 search queries for the knowledge base: paraphrases, a keyword query, and ALWAYS one translation into the other language (Korean<->English), because the documents are in both.
web_query: for current_events (or anything that may need the web), the message as a short search-engine query: keywords only, no filler ("오늘 한국 뉴스 알려줘" -> "한국 뉴스 오늘"); otherwise "".
filters: only when the user names a file, a document title or pages.
user_facts: only facts the user states about themselves in this message.
complexity: simple (one fact), moderate, complex (several parts or a comparison).

What you remember about this user: {profile or "(nothing yet)"}"""
    if glossary:  # last, so the prompt's long shared beginning stays the same
        heading = (
            "Team glossary (Korean = English): when a variation, the translation or the "
            "standalone question uses one of these terms, write it exactly as spelled here."
        )
        system = f"{system}\n\n{glossary_block(glossary, heading)}"
    thread = _history_block(history, summary, history_budget)
    human = f"Thread so far:\n{thread}\n\nNew message:\n{text}"
    return [SystemMessage(system), HumanMessage(human)]


def review_messages(question: str, items: Sequence[PoolItem]) -> list[BaseMessage]:
    system = (
        "You judge search results for a question. Rank the passages by how much they help "
        "answer it (best first, leave out useless ones). Then score sufficiency from 0 to 1: "
        "1 means the ranked passages fully answer every part of the question. List the "
        "missing aspects as short search phrases (in the question's language), or none."
    )
    human = f"Question: {question}\n\nPassages:\n{passages_block(items)}"
    return [SystemMessage(system), HumanMessage(human)]


def answer_messages(
    question: str,
    items: Sequence[PoolItem],
    *,
    language: str,
    style: str,
    history: Sequence[BaseMessage],
    summary: str,
    profile: str,
    feedback: str,
    persona: str = "",
    history_budget: int = 1200,
    glossary: Sequence[TermPair] = (),
) -> list[BaseMessage]:
    """The answer prompt. ``glossary``: the team's pairs the question or the passages
    name; none leaves the prompt as it was, byte for byte."""
    rules = _ANSWER_RULES.get(language, _ANSWER_RULES["en"])
    parts = [persona or PERSONA, rules, _STYLE.get(style, _STYLE["normal"])]
    if glossary:
        heading = _GLOSSARY_RULE.get(language, _GLOSSARY_RULE["en"])
        parts.append(glossary_block(glossary, heading))
    if profile:
        parts.append(f"About the user (use only if relevant): {profile}")
    if feedback:
        parts.append(f"Your previous draft was rejected: {feedback}\nFix exactly that.")
    human = (
        f"Conversation so far:\n{_history_block(history, summary, history_budget)}\n\n"
        f"Passages:\n{passages_block(items)}\n\nQuestion: {question}"
    )
    return [SystemMessage("\n\n".join(parts)), HumanMessage(human)]


def verdict_messages(question: str, answer: str, items: Sequence[PoolItem]) -> list[BaseMessage]:
    system = (
        "You check an assistant's answer against its numbered source passages. grounded: every "
        "factual claim is supported by the cited passages (saying the sources do not cover "
        "something is fine). answers_question: it addresses what was asked, or honestly says "
        "the sources do not cover it. Scores from 0 to 1. reason: what to fix, or ''. missing: "
        "short search queries (in the question's language) for what the answer needs but the "
        "passages lack, so the next attempt can look for it; [] when nothing is missing."
    )
    human = f"Question: {question}\n\nPassages:\n{passages_block(items)}\n\nAnswer:\n{answer}"
    return [SystemMessage(system), HumanMessage(human)]


def tools_messages(text: str, language: str, timezone: str, persona: str = "") -> list[BaseMessage]:
    system = (
        f"{persona or PERSONA}\nUse the calculator for arithmetic and current_datetime for "
        f"the date or time (default timezone {timezone}). Reply in "
        f"{'Korean' if language == 'ko' else 'English'}, briefly."
    )
    return [SystemMessage(system), HumanMessage(text)]


_CREATIVE_RULES = {
    "ko": (
        "작성 규칙:",
        "- 한국어로 쓰세요.",
        "- 팀에 관한 사실(절차, 채널, 일정, 정책)은 먼저 search_documents로 찾아 확인하고, 찾은 "
        "자료는 [1]처럼 번호로 인용하세요.",
        "- 확인하지 못한 팀 사실은 지어내지 말고 빈칸([ ])으로 두세요.",
        "- 요청한 형식(공지문, 메시지, 이메일 등)에 맞게 바로 붙여 넣을 수 있는 초안을 쓰세요.",
    ),
    "en": (
        "Writing rules:",
        "- Write in English.",
        "- Check facts about the team (procedures, channels, schedules, policies) with "
        "search_documents first, and cite what you found like [1].",
        "- Never invent a team fact you could not check: leave a blank ([ ]) instead.",
        "- Write a draft in the requested form (announcement, message, email...) ready to paste.",
    ),
}
_TOOL_RULE = 2  # the line about searching; a model without tool calling skips it


def creative_messages(
    text: str, language: str, today: str, persona: str = "", *, tools: bool = True
) -> list[BaseMessage]:
    """Seed 004's creative agent: drafting, with tools when the model can call them."""
    rules = list(_CREATIVE_RULES.get(language, _CREATIVE_RULES["en"]))
    if not tools:
        del rules[_TOOL_RULE]
    body = "\n".join(rules)
    system = f"{persona or PERSONA}\nToday is {today}.\n\n{body}"
    return [SystemMessage(system), HumanMessage(text)]


def general_messages(text: str, language: str, persona: str = "") -> list[BaseMessage]:
    """A general question (no team documents needed), answered briefly with no tools."""
    reply_in = "Korean" if language == "ko" else "English"
    system = f"{persona or PERSONA}\nAnswer briefly and accurately in {reply_in}."
    return [SystemMessage(system), HumanMessage(text)]
