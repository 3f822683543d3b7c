"""State shared by every worker of a team deployment, kept in Redis.

Each piece (thread locks, the answer cache) has an in-process twin it falls back
to while Redis is unreachable: a worker keeps answering through an outage and
goes back to the shared state when Redis returns (:class:`~agent.shared.link.RedisLink`).
"""
