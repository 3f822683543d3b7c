"""Run each source at its interval inside a long-running process (the bots, `serve`).

Sources and their next run are in their store (the data folder's catalog file, or
Postgres shared by every host), so a restart resumes where the last process stopped;
a failed source is retried after a back-off (sync.py) while the others keep their own
schedule. The clock is injected: tests move time instead of waiting for it.

Start it from any process that runs for days::

    stop = asyncio.Event()
    task = asyncio.create_task(SourceScheduler(sync, lock=lock).run(stop))
    ...
    stop.set(); await task
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from agent.sources.locks import SyncLock
from agent.sources.sync import SourceSync, SyncOutcome

log = logging.getLogger(__name__)


class SourceScheduler:
    def __init__(
        self,
        sync: SourceSync,
        *,
        lock: SyncLock,
        clock: Callable[[], float] = time.time,
        max_wait_s: float = 60.0,
        on_outcome: Callable[[SyncOutcome], None] | None = None,
    ) -> None:
        self.sync = sync
        self.lock = lock
        self.clock = clock
        # Sources added by `teamrag sources add` in another process are seen within this.
        self.max_wait_s = max_wait_s
        self.on_outcome = on_outcome
        self._stop = asyncio.Event()

    async def run_due(self) -> list[SyncOutcome]:
        """Sync every source whose time has come, one after the other."""
        outcomes: list[SyncOutcome] = []
        for state in await asyncio.to_thread(self.sync.store.due, self.clock()):
            if self._stop.is_set():
                break
            name = state.spec.name
            async with self.lock.hold(name) as mine:
                if not mine:
                    continue  # another worker is syncing it
                fresh = await asyncio.to_thread(self.sync.store.get, name)
                if fresh is None or fresh.next_run > self.clock():
                    continue  # removed, or another worker synced it just before us
                outcome = await asyncio.to_thread(self.sync.sync, name, stop=self._stop.is_set)
            self._report(outcome)
            outcomes.append(outcome)
        return outcomes

    async def run(self, stop: asyncio.Event) -> None:
        """Sync due sources until ``stop`` is set; a sync under way ends after its batch."""
        self._stop = stop
        while not stop.is_set():
            wake: float | None = None
            try:
                await self.run_due()
                wake = await asyncio.to_thread(self.sync.store.next_wake)
            except Exception:
                # A shared store's server may be restarting: the next pass reconnects.
                log.exception("the source scheduler failed a pass; trying again")
            delay = self.max_wait_s if wake is None else wake - self.clock()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), min(self.max_wait_s, max(delay, 0.5)))

    def _report(self, outcome: SyncOutcome) -> None:
        report = outcome.report
        if outcome.error:
            log.warning("source %s failed: %s", outcome.name, outcome.error)
        elif not outcome.interrupted:
            log.info(
                "source %s synced: %d added, %d updated, %d removed, %d failed",
                outcome.name, len([r for r in report.results if r.status == "added"]),
                len([r for r in report.results if r.status == "updated"]),
                len([r for r in report.results if r.status == "removed"]), len(report.failed),
            )  # fmt: skip
        if self.on_outcome is not None:
            self.on_outcome(outcome)
