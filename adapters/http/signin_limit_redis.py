"""The sign-in limit shared by every worker: :class:`RedisSignInLimiter` (the in-process
twin is :class:`adapters.http.signin_limit.LocalSignInLimiter`, with the rules)."""

from __future__ import annotations

import redis.asyncio as aredis

from adapters.http.signin_limit import LocalSignInLimiter, SignInPolicy
from agent.coordination.redis_connection import RedisConnection

# Redis's own clock (TIME) is the one every worker shares. Each key is a hash: f = failures,
# u = locked until (ms). It expires window_ms after the lock ends, which forgets the count.
_NOW = """
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
"""

# KEYS: the limits' keys. Returns the longest lock left (ms), or -1 when none is locked.
_WAIT = (
    _NOW
    + """
local wait = -1
for _, key in ipairs(KEYS) do
  local left = tonumber(redis.call('hget', key, 'u') or '0') - now
  if left > wait then wait = left end
end
if wait <= 0 then return -1 end
return wait
"""
)

# KEYS: the limits' keys. ARGV: first lock ms, longest lock ms, window ms, then each key's
# allowance. Counting and locking in one step: two workers counting the same account at
# once both count.
_FAILED = (
    _NOW
    + """
local base, longest, window = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
for i, key in ipairs(KEYS) do
  local allowed = tonumber(ARGV[3 + i])
  local failures = redis.call('hincrby', key, 'f', 1)
  local lock = 0
  if failures >= allowed then
    lock = math.floor(math.min(longest, base * 2 ^ math.min(failures - allowed, 30)))
  end
  redis.call('hset', key, 'u', now + lock)
  redis.call('pexpire', key, lock + window)
end
return 0
"""
)


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


class RedisSignInLimiter:
    """The limit shared by every worker; its own :class:`LocalSignInLimiter` while Redis is
    unreachable (then each worker limits on its own)."""

    def __init__(self, redis: RedisConnection, policy: SignInPolicy) -> None:
        self.policy = policy
        self._local = LocalSignInLimiter(policy)
        self._redis = redis
        self._wait = redis.client.register_script(_WAIT)
        self._failed = redis.client.register_script(_FAILED)

    def _keys(self, account: str, address: str) -> tuple[list[str], list[int]]:
        limits = self.policy.limits(account, address)
        return [self._redis.key("signin", key) for key, _ in limits], [a for _, a in limits]

    async def wait(self, account: str, address: str) -> float | None:
        keys, _ = self._keys(account, address)
        if not keys:
            return None

        async def on_redis(client: aredis.Redis) -> float | None:
            wait_ms = int(await self._wait(keys=keys, client=client))
            return None if wait_ms < 0 else wait_ms / 1000

        return await self._redis.attempt(
            on_redis,
            lambda: self._local.wait(account, address),
            what="checking the sign-in limit",
        )

    async def failed(self, account: str, address: str) -> None:
        keys, allowances = self._keys(account, address)
        if not keys:
            return
        policy = self.policy
        args = [_ms(policy.lockout_s), _ms(policy.max_lockout_s), _ms(policy.window_s)]

        async def on_redis(client: aredis.Redis) -> None:
            await self._failed(keys=keys, args=[*args, *allowances], client=client)

        await self._redis.attempt(
            on_redis,
            lambda: self._local.failed(account, address),
            what="counting a failed sign-in",
        )

    async def succeeded(self, account: str) -> None:
        key = self._redis.key("signin", f"account:{account}")

        async def on_redis(client: aredis.Redis) -> None:
            await client.delete(key)

        await self._redis.attempt(
            on_redis,
            lambda: self._local.succeeded(account),
            what="clearing the sign-in failures",
        )
