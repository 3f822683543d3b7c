"""Plumbing: small cross-cutting helpers with no knowledge of answering questions.

One SQLite write transaction (:mod:`.sqlite_tx`), the thread and event ids on every
log line (:mod:`.log_context`), server URLs without their passwords (:mod:`.urls`),
and stopping work that may sit in a Redis call (:mod:`.stopping`). Everything in
agent/, adapters/ and bots/ may use them; they import nothing else from agent/.
"""
