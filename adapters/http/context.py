"""What the HTTP routes are given: the chat services the bots share, and the service's
own stores. Built by ``bots/serve.py`` (or a test) and kept on ``app.state``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from adapters.chat.services import ChatServices
from adapters.http.accounts import AccountStore
from adapters.http.conversations import ConversationStore
from adapters.http.passwords import PasswordChecks
from adapters.http.signin_limit import LocalSignInLimiter, SignInLimiter, SignInPolicy
from adapters.http.tokens import Tokens
from agent.events import Turn

PLATFORM = "http"
WORKSPACE = "http"
CHANNEL = "api"


def conversation_thread_id(conversation_id: str) -> str:
    """The agent's thread of a conversation: its id is the thread root, as a Slack thread's."""
    return Turn("", PLATFORM, WORKSPACE, CHANNEL, conversation_id).thread_id


@dataclass
class HttpContext:
    services: ChatServices
    accounts: AccountStore
    conversations: ConversationStore
    tokens: Tokens
    # The agent's own input guard has this limit too; checked first to answer 422.
    max_input_chars: int = 4000
    # TEAMRAG_HTTP_MAX_BODY_BYTES: a request body over it is refused (413) as it arrives.
    max_body_bytes: int = 1_048_576
    # TEAMRAG_HTTP_MAX_HISTORY_CHARS: the messages of one /v1 request, all together.
    max_history_chars: int = 100_000
    # What an account without scopes of its own may search (TEAMRAG_DEFAULT_SCOPE).
    default_scope: str = "public"
    # The documents and their scopes in the knowledge base (for /admin).
    documents: Callable[[], list[dict[str, Any]]] = field(default=lambda: [])
    model_name: str = "teamrag"
    # Failed password sign-ins, per account and per address (TEAMRAG_SIGNIN_*).
    signin_limiter: SignInLimiter = field(
        default_factory=lambda: LocalSignInLimiter(SignInPolicy())
    )
    # argon2 on threads of its own, never the database's (TEAMRAG_SIGNIN_THREADS).
    passwords: PasswordChecks = field(default_factory=PasswordChecks)
