"""The one Redis link every Redis-backed piece goes through (:mod:`agent.shared.link`).

The pieces themselves sit beside their in-process twins, named ``x.py`` and
``x_redis.py`` (``agent/locks_redis.py``, ``agent/cache/answer_redis.py``,
``adapters/chat/queue_redis.py``...). Each falls back to its twin while Redis is
unreachable: a worker keeps answering through an outage and goes back to the shared
state when Redis returns.
"""
