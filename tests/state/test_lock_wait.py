"""Waiting for a held lock honours --lock-timeout on an injected clock: no real sleeps here."""

from __future__ import annotations

from pathlib import Path

import pytest

from state import LockInfo, SqliteStateBackend, StateLocked
from state.locking import POLL_INTERVAL, wait_for_lock

HOLDER = LockInfo("held-1", "apply", "bob@ci", 4242, "runner-7", "2025-01-01T00:00:00")


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def locked_until(clock: FakeClock, free_at: float) -> LockInfo:
    if clock() < free_at:
        raise StateLocked(HOLDER)
    return HOLDER


def test_waits_until_the_holder_lets_go_within_the_timeout() -> None:
    clock = FakeClock()
    got = wait_for_lock(lambda: locked_until(clock, 1001.0), 5.0, clock=clock, sleep=clock.sleep)
    assert got == HOLDER
    assert 1001.0 <= clock.now < 1001.0 + 2 * POLL_INTERVAL
    assert all(0 < s <= POLL_INTERVAL for s in clock.slept)


def test_gives_up_at_the_timeout_naming_the_holder() -> None:
    clock = FakeClock()
    with pytest.raises(StateLocked) as caught:
        wait_for_lock(lambda: locked_until(clock, 1e9), 3.0, clock=clock, sleep=clock.sleep)
    assert caught.value.holder == HOLDER and "bob@ci" in str(caught.value)
    assert clock.now == pytest.approx(1003.0)  # never sleeps past the deadline


def test_zero_timeout_tries_once_and_never_sleeps() -> None:
    clock = FakeClock()
    attempts: list[float] = []

    def attempt() -> LockInfo:
        attempts.append(clock())
        raise StateLocked(HOLDER)

    with pytest.raises(StateLocked):
        wait_for_lock(attempt, 0, clock=clock, sleep=clock.sleep)
    assert attempts == [1000.0] and clock.slept == []


def test_a_waiting_command_takes_the_lock_when_the_holder_releases(tmp_path: Path) -> None:
    db = tmp_path / ".poolform" / "state.db"
    clock = FakeClock()
    holder = SqliteStateBackend(db)
    held = holder.lock("apply", who="first@host")

    def sleep(seconds: float) -> None:  # the holder lets go while the waiter sleeps
        clock.sleep(seconds)
        if holder.locker.held is not None:
            holder.unlock(held.lock_id)

    waiter = SqliteStateBackend(db, clock=clock, sleep=sleep)
    try:
        with pytest.raises(StateLocked, match="first@host"):
            waiter.lock("plan", timeout=0)
        got = waiter.lock("plan", timeout=30)
        assert got.operation == "plan" and got.notice == ""
        assert len(clock.slept) == 1  # one wait, then the lock was free
    finally:
        waiter.close()
        holder.close()


def test_a_look_at_the_holder_does_not_count_as_holding_the_lock(tmp_path: Path) -> None:
    """`plan --no-lock` (and force-unlock) look at who holds the lock by taking the lock
    file's flock for an instant. A command taking the lock at that instant, even with no
    timeout, tries again rather than being told the state is locked by nobody it can name."""
    import fcntl
    import os

    db = tmp_path / ".poolform" / "state.db"
    db.parent.mkdir()
    lock_file = db.parent / "state.lock"
    glance = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(glance, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a look, under way
    slept: list[float] = []

    def sleep(seconds: float) -> None:  # the look ends while the taker waits
        slept.append(seconds)
        fcntl.flock(glance, fcntl.LOCK_UN)

    taker = SqliteStateBackend(db, sleep=sleep)
    try:
        got = taker.lock("apply", timeout=0)
        assert got.operation == "apply"
        assert len(slept) == 1
    finally:
        taker.close()
        os.close(glance)
