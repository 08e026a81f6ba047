"""Test doubles shared by the unit tests: a clock that never waits."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta


class FakeClock:
    """A Clock (providers/retry.py) whose time moves only when someone sleeps: sleeps are
    recorded and return at once, so retries and elapsed times need no real time."""

    def __init__(self, start: float = 1000.0):
        self.time = start
        self.slept: list[float] = []
        self._lock = threading.Lock()

    def monotonic(self) -> float:
        with self._lock:
            return self.time

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.slept.append(seconds)
            self.time += seconds

    def now(self) -> datetime:
        return datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=self.monotonic())
