"""The answer cache: a repeated or reworded question is answered without the LLM.

A lookup tries the normalised question text first, then the nearest stored
question vector in the same scope. An answer is only served while every
document it cited is at the version it was answered from: a stale answer costs
a wrong reply, a miss only costs an LLM call, so any doubt drops the entry.

``SqliteAnswerCache`` is the embedded default, one SQLite file that several
bot processes share; ``RedisAnswerCache`` shares the cache between workers.

This package re-exports the public names so callers keep importing from
``agent.cache``: ``answer`` holds the contract, ``index`` the in-memory vector
matrix, ``answer_sqlite`` the default backend and ``answer_redis`` the shared one.
"""

from agent.cache.answer import (
    AnswerCache,
    CachedAnswer,
    SameQuestion,
    VersionLookup,
    normalize_question,
)
from agent.cache.answer_sqlite import SqliteAnswerCache

__all__ = [
    "AnswerCache",
    "CachedAnswer",
    "SameQuestion",
    "SqliteAnswerCache",
    "VersionLookup",
    "normalize_question",
]
