"""App Home: what the bot knows, how to ask, the user's last questions, and for
workspace admins the week's usage and the questions without an answer (not covered by
the documents, or marked unhelpful), grouped by topic.

Published with ``views.publish`` each time the user opens the Home tab, in their
Slack language. The documents shown are those of the user's DM rule (what the bot
may answer them with in a DM): App Home is outside any channel, so no channel's
scopes apply, and no title of another scope is shown.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.chat.library import Shelf
from adapters.chat.services import ChatServices
from adapters.chat.unanswered import unanswered
from adapters.slack.assistant import user_language
from adapters.slack.markup import escape
from adapters.slack.queued import SlackBot
from adapters.slack.render import Block
from adapters.slack.turns import PLATFORM

log = logging.getLogger(__name__)

RECENT = 5
TOPICS = 5  # topic groups shown, and questions per group
WEEK_DAYS = 7

_SAID = {
    "knows": ("*What I know*", "*알고 있는 것*"),
    "scope": ("`{scope}`: {count} documents", "`{scope}`: 문서 {count}개"),
    "none": ("No documents yet: see `teamrag ingest`.",
             "아직 문서가 없습니다: `teamrag ingest`를 참고하세요."),
    "last": ("Last added: {when} UTC", "마지막 추가: {when} UTC"),
    "how": (
        "*How to ask*\nMention me in a channel, send me a DM, use `/ask` (`/ask -p` for an "
        "answer only you see), open me beside any channel, or pick *Ask teamrag* from a "
        "message's menu.",
        "*질문하는 법*\n채널에서 멘션하거나 DM을 보내거나 `/ask`를 쓰세요(나만 보기: "
        "`/ask -p`). 어느 채널 옆에서든 저를 열거나, 메시지 메뉴에서 *Ask teamrag*를 고르세요.",
    ),
    "recent": ("*Your recent questions*", "*최근 질문*"),
    "admin": ("*This week (admins)*: {requests} questions, {tokens} tokens",
              "*이번 주 (관리자)*: 질문 {requests}개, 토큰 {tokens}개"),
    "no_usage": ("*This week (admins)*: no usage records are kept by this bot.",
                 "*이번 주 (관리자)*: 이 봇은 사용 기록을 남기지 않습니다."),
    "unanswered": ("*Questions without an answer* (not in the documents, or 👎), by topic",
                   "*답을 찾지 못한 질문* (문서에 없거나 👎), 주제별"),
    "other": ("Other questions", "기타 질문"),
}  # fmt: skip


def said(key: str, language: str, **values: Any) -> str:
    english, korean = _SAID[key]
    return (korean if language == "ko" else english).format(**values)


def section(text: str) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:3000]}}


def thread_link(thread_id: str) -> str | None:
    """A link to a Slack thread from a turn's thread id (``slack:team:channel:root``)."""
    parts = thread_id.split(":")
    if len(parts) != 4 or parts[0] != PLATFORM:
        return None
    _, _, channel, root = parts
    return f"https://slack.com/archives/{channel}/p{root.replace('.', '')}"


async def home_view(
    services: ChatServices, team: str, user: str, channel: str, language: str, admin: bool
) -> dict[str, Any]:
    documents = await asyncio.to_thread(services.documents)
    shelf = Shelf.of(documents, services.rules.for_channel(channel).scopes)
    knows = [said("knows", language)]
    knows += [said("scope", language, scope=s, count=n) for s, n in shelf.counts_by_scope()]
    if shelf.last_ingested is not None:
        when = dt.datetime.fromtimestamp(shelf.last_ingested, dt.UTC).strftime("%Y-%m-%d %H:%M")
        knows.append(said("last", language, when=when))
    if not shelf.documents:
        knows.append(said("none", language))
    blocks: list[Block] = [section("\n".join(knows)), section(said("how", language))]
    if services.usage is not None:
        asked = await services.usage.recent(f"{PLATFORM}:{team}:{user}", RECENT)
        lines = [said("recent", language)]
        for question in asked:
            link = thread_link(question.thread_id)
            text = escape(question.text[:150])
            lines.append(f"• <{link}|{text}>" if link else f"• {text}")
        if asked:
            blocks.append(section("\n".join(lines)))
    if admin:
        blocks += await admin_blocks(services, language)
    return {"type": "home", "blocks": blocks}


async def admin_blocks(services: ChatServices, language: str) -> list[Block]:
    blocks: list[Block] = []
    if services.usage is not None:
        rows = await services.usage.report(WEEK_DAYS)
        requests = sum(r.requests for r in rows)
        tokens = sum(r.total_tokens for r in rows)
        blocks.append(section(said("admin", language, requests=requests, tokens=tokens)))
    else:
        blocks.append(section(said("no_usage", language)))
    # This workspace's questions the documents did not answer: which documents to write.
    groups = await unanswered(services.usage, services.feedback, 50, platform=PLATFORM)
    if groups:
        lines = [said("unanswered", language)]
        for g in groups[:TOPICS]:
            lines.append(f"*{escape(g.topic or said('other', language))}* ({len(g.items)})")
            for item in g.items[:TOPICS]:
                link = thread_link(item.thread_id)
                text = escape(item.question[:150])
                mark = " 👎" if "thumbs_down" in item.reasons else ""
                lines.append((f"• <{link}|{text}>" if link else f"• {text}") + mark)
        blocks.append(section("\n".join(lines)))
    return blocks


async def is_admin(client: AsyncWebClient, user: str) -> bool:
    try:
        info = await client.users_info(user=user)
    except SlackApiError as exc:
        log.info("users.info failed for %s (%s): not shown as admin", user, exc)
        return False
    person = info.get("user") or {}
    return bool(person.get("is_admin") or person.get("is_owner"))


def register(app: AsyncApp, bot: SlackBot) -> None:
    @app.event("app_home_opened")
    async def opened(body: dict[str, Any], event: dict[str, Any], client: AsyncWebClient) -> None:
        if event.get("tab", "home") != "home":
            return  # the Messages tab is the DM, answered as such
        user = str(event["user"])
        with bot.working():
            language = await user_language(client, user)
            admin = await is_admin(client, user)
            view = await home_view(
                bot.services,
                str(body.get("team_id") or ""),
                user,
                str(event.get("channel") or ""),
                language,
                admin,
            )
            await client.views_publish(user_id=user, view=view)
