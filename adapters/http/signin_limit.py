"""The limit on failed password sign-ins, per account and per client address.

Each wrong password counts against the account named and the address it came from.
Once one of them reaches its allowance it is locked: the first lock lasts
``lockout_s``, and each further failure after a lock doubles it, up to
``max_lockout_s``. While either is locked a sign-in is refused before its password is
hashed, so a flood costs a dictionary lookup, not 64 MiB of argon2. Failures are
forgotten ``window_s`` after the last one (or after the lock ends); a right password
clears the account's count, never the address's: an attacker holding one account must
not be able to reset their address between guesses at another.

Locking an account on failures lets anyone lock it for a while by guessing wrong; the
lock is short at first and an admin can still issue a token (``teamrag users token``).

:class:`LocalSignInLimiter` counts in this process; :class:`~adapters.http.
signin_limit_redis.RedisSignInLimiter` shares the counts with every worker.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class SignInPolicy:
    per_account: int = 5  # failures before the account is locked; 0 = no per-account limit
    per_address: int = 20  # failures before the address is locked; 0 = no per-address limit
    lockout_s: float = 30.0
    max_lockout_s: float = 900.0
    window_s: float = 900.0

    def limits(self, account: str, address: str) -> list[tuple[str, int]]:
        """The (key, allowance) pairs a sign-in counts against; none that are off."""
        pairs = [(f"account:{account}", self.per_account), (f"address:{address}", self.per_address)]
        return [(key, allowed) for key, allowed in pairs if allowed > 0]

    def lock_s(self, failures: int, allowed: int) -> float:
        """How long ``failures`` lock a key that allows ``allowed``; 0 below the allowance."""
        if failures < allowed:
            return 0.0
        doubled = self.lockout_s * float(2 ** min(failures - allowed, 30))
        return min(self.max_lockout_s, doubled)


class SignInLimiter(Protocol):
    policy: SignInPolicy

    async def wait(self, account: str, address: str) -> float | None:
        """None: the sign-in may go ahead; else the seconds until it may."""
        ...

    async def failed(self, account: str, address: str) -> None:
        """Count a wrong password against the account and the address."""
        ...

    async def succeeded(self, account: str) -> None:
        """A right password: the account's failures are forgotten."""
        ...


@dataclass
class _Count:
    failures: int
    locked_until: float
    forget_at: float


class LocalSignInLimiter:
    """The limit within one process."""

    def __init__(
        self, policy: SignInPolicy, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.policy = policy
        self._clock = clock
        self._counts: dict[str, _Count] = {}
        self._calls = 0

    async def wait(self, account: str, address: str) -> float | None:
        now = self._clock()
        waits = [
            count.locked_until - now
            for key, _ in self.policy.limits(account, address)
            if (count := self._counts.get(key)) is not None and count.locked_until > now
        ]
        return max(waits) if waits else None

    async def failed(self, account: str, address: str) -> None:
        now = self._clock()
        self._calls += 1
        if self._calls % 1000 == 0:
            self._sweep(now)
        for key, allowed in self.policy.limits(account, address):
            count = self._counts.get(key)
            if count is None or count.forget_at <= now:
                count = self._counts[key] = _Count(0, 0.0, 0.0)
            count.failures += 1
            lock = self.policy.lock_s(count.failures, allowed)
            count.locked_until = now + lock
            count.forget_at = now + lock + self.policy.window_s

    async def succeeded(self, account: str) -> None:
        self._counts.pop(f"account:{account}", None)

    def _sweep(self, now: float) -> None:
        """Drop what is forgotten, so memory follows recent failures only (a flood of
        made-up names must not grow the process)."""
        for key in [k for k, c in self._counts.items() if c.forget_at <= now]:
            del self._counts[key]
