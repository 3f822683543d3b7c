"""Event de-duplication: a retried delivery is recognised by any of its keys."""

from __future__ import annotations

from adapters.chat.dedupe import LocalDeduper


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_the_second_delivery_of_an_event_is_recognised() -> None:
    dedupe = LocalDeduper()
    assert await dedupe.first("Ev1", "msg:C1:1700000000.1")
    assert not await dedupe.first("Ev1", "msg:C1:1700000000.1")


async def test_a_retry_with_a_new_event_id_but_the_same_message_is_recognised() -> None:
    # Socket Mode redelivery after a reconnect can carry another envelope for one message.
    dedupe = LocalDeduper()
    assert await dedupe.first("Ev1", "msg:C1:1")
    assert not await dedupe.first("Ev2", "msg:C1:1")
    assert not await dedupe.first("Ev2")  # and the new id is remembered too


async def test_keys_expire_after_the_ttl() -> None:
    clock = Clock()
    dedupe = LocalDeduper(ttl_s=60, clock=clock)
    assert await dedupe.first("Ev1")
    clock.now += 59
    assert not await dedupe.first("Ev1")
    clock.now += 61
    assert await dedupe.first("Ev1")


async def test_memory_is_bounded() -> None:
    dedupe = LocalDeduper(max_keys=3)
    for key in ("a", "b", "c", "d"):
        assert await dedupe.first(key)
    assert await dedupe.first("a")  # the oldest was forgotten to keep the bound
    assert not await dedupe.first("d")


async def test_a_delivery_without_ids_is_answered_rather_than_dropped() -> None:
    dedupe = LocalDeduper()
    assert await dedupe.first("", "")
    assert await dedupe.first()
