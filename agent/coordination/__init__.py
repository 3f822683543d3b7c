"""What keeps several worker processes in step: one run at a time per thread, and the one
Redis connection all their shared state goes through.

:mod:`.locks` holds the per-thread lock protocol (with :class:`~.locks.LockLostError`) and
its in-process and file twins, :mod:`.locks_redis` the lease every worker shares, and
:mod:`.redis_connection` the process's Redis clients and the rule for when Redis fails.

The other Redis-backed pieces sit beside their in-process twins, named ``x.py`` and
``x_redis.py`` (``agent/coordination/locks_redis.py``, ``agent/cache/answer_redis.py``,
``adapters/chat/queue_redis.py``...). Each falls back to its twin while Redis is
unreachable: a worker keeps answering through an outage and goes back to the shared
state when Redis returns.
"""
