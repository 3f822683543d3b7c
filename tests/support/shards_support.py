"""``teamrag discord`` processes, one shard each, against the fake Discord: starting them
(again), finding the one answering a question, and reading what they left in Redis.

Each is a :class:`~tests.support.workers_support.Worker` (its own data folder, the shared
servers of :func:`~tests.support.workers_support.worker_env`) running ``discord``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from tests.fakes.discord_payloads import TOKEN
from tests.fakes.discord_rest import GLOBAL_COMMANDS
from tests.fakes.discord_server import FakeDiscord
from tests.support.discord_support import until
from tests.support.servers import free_port
from tests.support.workers_support import Worker, stop_all


def discord_env(env: dict[str, str], fake: FakeDiscord) -> dict[str, str]:
    """A :func:`~tests.support.workers_support.worker_env` for two shards on ``fake``."""
    return env | {
        "TEAMRAG_DISCORD_SHARD_COUNT": "2",
        "DISCORD_TOKEN": TOKEN,
        "DISCORD_API_BASE": fake.api_base,
        "DISCORD_GATEWAY_URL": fake.gateway_url,
    }


@dataclass
class Shards:
    fake: FakeDiscord
    workers: list[Worker]
    redis_url: str

    @classmethod
    def of(cls, fake: FakeDiscord, env: dict[str, str], folder: Path, redis_url: str) -> Shards:
        """Shard 0 and shard 1, each a process of its own (not started)."""
        workers = [
            Worker(f"shard{shard}", env | own_shard(shard), folder, command=("discord",))
            for shard in (0, 1)
        ]
        return cls(fake, workers, redis_url)

    def logs(self) -> str:
        return "\n".join(f"=== worker {w.name} ===\n{w.log(4000)}" for w in self.workers)

    async def ensure_up(self) -> None:
        """Start (again) every process that is not running; wait until each shard is
        connected (shard 0 registers the commands at its first start)."""
        identified = len(self.fake.gateway.identifies)
        started = [w for w in self.workers if not w.alive]
        for worker in started:
            worker.start()
        await until(
            lambda: (
                (
                    len(self.fake.gateway.identifies) >= identified + len(started)
                    and self.fake.gateway.ready_shards() == {0, 1}
                    and self.fake.calls_to(GLOBAL_COMMANDS)
                )
                or not all(w.alive for w in self.workers)
            ),
            f"both shards to connect\n{self.logs()}",
            timeout=120,
        )
        assert all(w.alive for w in self.workers), self.logs()

    def stop(self) -> None:
        """SIGTERM every shard process at once; each closes its gateway session."""
        stop_all(self.workers)

    async def answering(self, thread_id: str) -> tuple[Worker, Worker]:
        """(the process that started answering the thread's turn, the other one): whichever
        read the question from the queue logs its steps with the thread id."""
        bound = f"[thread={thread_id} "
        victim = await until(
            lambda: next((w for w in self.workers if bound in w.log(0)), None),
            f"a process to start answering\n{self.logs()}",
        )
        (survivor,) = [w for w in self.workers if w is not victim]
        return victim, survivor

    def drained(self) -> bool:
        """Every queued Discord turn finished (none pending with any process)."""
        client = redis.Redis.from_url(self.redis_url)
        try:
            return all(
                group["pending"] == 0
                for stream in client.scan_iter(match="*queue:discord", _type="stream")
                for group in client.xinfo_groups(stream)
            )
        finally:
            client.close()

    def noted_reply(self, messages: list[dict[str, Any]]) -> str | None:
        """The id of the one bot message in a channel once a process noted it with its
        queued turn (a process taking the turn over edits that one)."""
        if len(messages) != 1:
            return None
        client = redis.Redis.from_url(self.redis_url, decode_responses=True)
        try:
            for key in client.scan_iter(match="*queue:discord:notes:*"):
                if client.hget(key, "reply_id") == messages[0]["id"]:
                    return str(messages[0]["id"])
        finally:
            client.close()
        return None


def own_shard(shard: int) -> dict[str, str]:
    return {"TEAMRAG_DISCORD_SHARD_IDS": f"[{shard}]", "TEAMRAG_OPS_PORT": str(free_port())}
