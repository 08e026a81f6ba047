"""The S3 lock: a lease object, created with ``If-None-Match: *``, renewed by its holder with
``If-Match`` on the ETag it holds, and taken over once it runs out.

A holder renews the lease in the background (every third of its length) and before every write,
so a write is fenced: a holder whose lease was taken over fails its next renewal with 412 and
stops (``LockLost``) before it can write over newer state. A lease runs out when its own expiry
time has passed on the taker's clock, or when its ETag stayed the same for a whole lease length
on the taker's monotonic clock (which needs no agreement between clocks). A dead holder thus
frees the lock within one lease length, and no human ever needs to break it.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

from state.errors import LockLost, LockMismatch, StateLocked
from state.locking import Clock, Sleep, breaking, new_lock_info, releasing, wait_for_lock
from state.model import LockInfo
from state.threads import leave_signals_to_the_main_thread

__all__ = ["POLL_S3", "Lease", "S3Calls"]

POLL_S3 = 0.25  # seconds between looks at a held lease: each look is a request


class S3Calls:
    """The few S3 calls a lease makes; ``put`` returns the new ETag or None on 412."""

    def __init__(
        self,
        get: Callable[[str], tuple[bytes, str] | None],
        put: Callable[..., str | None],
    ) -> None:
        self.get = get
        self.put = put


def _holder(body: dict[str, Any]) -> LockInfo:
    data = body.get("holder") or {}
    fields = {k: data[k] for k in LockInfo.__dataclass_fields__ if k in data and k != "notice"}
    try:
        return LockInfo(**fields)
    except TypeError:
        return LockInfo("unknown", "unknown", "unknown", 0, "unknown", "unknown")


# The lengths a lease may say it lasts (the Cluster's state.lease_seconds allows the same).
LEASE_LOW, LEASE_HIGH = 1.0, 3600.0


def _length(said: Any, own: float) -> float:
    """How long to watch a lease whose ETag does not change: the length it says, unless that
    is no length a poolform writes (NaN, infinite, 0, negative, a damaged body), which would
    keep a dead holder's lock for good or end a live one's at once."""
    number = isinstance(said, int | float) and not isinstance(said, bool)
    return float(said) if number and LEASE_LOW <= said <= LEASE_HIGH else own


class Lease:
    """A Locker over one lease object (``key``)."""

    frees_dead_holder = True

    def __init__(
        self,
        calls: S3Calls,
        key: str,
        *,
        where: str,
        seconds: float = 30.0,
        renew_every: float | None = None,
        directory: str = "",
        clock: Clock = time.monotonic,
        wall: Clock = time.time,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.calls = calls
        self.key = key
        self.where = where
        self.seconds = seconds
        self.renew_every = renew_every
        self.directory = directory
        self.clock, self.wall, self.sleep = clock, wall, sleep
        self.held: LockInfo | None = None
        self.etag: str | None = None
        self.lost = False
        self._watch: tuple[str, float] | None = None  # (ETag seen, when first seen)
        self._mutex = threading.Lock()
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None

    def _body(self, info: LockInfo, *, released: bool = False) -> bytes:
        holder = {k: v for k, v in asdict(info).items() if k != "notice"}
        expires = 0.0 if released else self.wall() + self.seconds
        document = {"holder": holder, "expires_at": expires, "seconds": self.seconds}
        return json.dumps({**document, "released": released}).encode()

    def _read(self) -> tuple[dict[str, Any], str] | None:
        found = self.calls.get(self.key)
        if found is None:
            return None
        data, etag = found
        try:
            body = json.loads(data)
        except (ValueError, RecursionError):  # damaged: a lease naming no holder
            body = {}
        return (body if isinstance(body, dict) else {}), etag

    def _ran_out(self, body: dict[str, Any], etag: str) -> bool:
        if body.get("released"):
            return True
        expires = body.get("expires_at")
        if isinstance(expires, int | float) and self.wall() > expires:
            return True
        now = self.clock()
        if self._watch is None or self._watch[0] != etag:
            self._watch = (etag, now)
        return now - self._watch[1] >= _length(body.get("seconds"), self.seconds)

    # -- the Locker -----------------------------------------------------------------------

    def lock(self, operation: str, *, timeout: float = 0, who: str | None = None) -> LockInfo:
        info = new_lock_info(operation, who=who, path=self.where)
        self._watch = None
        got = wait_for_lock(
            lambda: self._try(info), timeout, clock=self.clock, sleep=self.sleep, poll=POLL_S3
        )
        self._start_renewing()
        return got

    def _try(self, info: LockInfo) -> LockInfo:
        found = self._read()
        if found is None:
            etag = self.calls.put(self.key, self._body(info), if_none_match=True)
            previous = None
        else:
            body, current = found
            if not self._ran_out(body, current):
                raise StateLocked(
                    _holder(body),
                    directory=self.directory,
                    detail=self._wait_hint(body),
                    lease_left=self._left(body, current),
                )
            etag = self.calls.put(self.key, self._body(info), if_match=current)
            previous = None if body.get("released") else _holder(body)
        if etag is None:  # another taker was quicker
            raise StateLocked(_holder((self._read() or ({}, ""))[0]), directory=self.directory)
        self.held, self.etag, self.lost = info, etag, False
        if previous is not None:
            return replace(
                info,
                notice=(
                    f"Took over the state lock of {previous.operation!r} by {previous.who} (pid "
                    f"{previous.pid} on {previous.host}, since {previous.created}): its lease "
                    "ran out without being renewed."
                ),
            )
        return info

    def _left(self, body: dict[str, Any], etag: str) -> float:
        """The longest a holder that stopped renewing keeps the lease: until its expiry time,
        and no longer than its length on this clock once the ETag stopped changing."""
        length = _length(body.get("seconds"), self.seconds)
        watched = self._watch[1] if self._watch and self._watch[0] == etag else self.clock()
        by_watch = max(0.0, length - (self.clock() - watched))
        expires = body.get("expires_at")
        if isinstance(expires, int | float) and math.isfinite(expires):
            return min(max(0.0, expires - self.wall()), by_watch)
        return by_watch

    def _wait_hint(self, body: dict[str, Any]) -> str:
        expires = body.get("expires_at")
        if isinstance(expires, int | float) and math.isfinite(expires):
            left = max(0.0, expires - self.wall())
            return f"its lease runs out in {left:.0f}s unless renewed (then it is taken over)"
        return ""

    def renew(self) -> None:
        """Extend the lease, fenced on the ETag held; LockLost when it was taken over."""
        with self._mutex:
            if self.held is None or self.etag is None:
                return
            if self.lost:
                raise self._lost_error()
            etag = self.calls.put(self.key, self._body(self.held), if_match=self.etag)
            if etag is None:
                self.lost = True
                raise self._lost_error()
            self.etag = etag

    def _lost_error(self) -> LockLost:
        return LockLost(
            f"this process lost the state lock of {self.where}: its lease ran out and another "
            "command took it over; nothing more is changed. Run the command again"
        )

    def _start_renewing(self) -> None:
        if self.renew_every is None:
            return
        self._stop.clear()
        interval = self.renew_every

        def loop() -> None:
            leave_signals_to_the_main_thread()
            while not self._stop.wait(interval):
                try:
                    self.renew()
                except Exception:  # lost or unreachable: the next write reports it
                    return

        self._renewer = threading.Thread(target=loop, name="poolform-lease", daemon=True)
        self._renewer.start()

    def _stop_renewing(self) -> None:
        self._stop.set()
        if self._renewer is not None and self._renewer is not threading.current_thread():
            self._renewer.join()
        self._renewer = None

    def unlock(self, lock_id: str) -> None:
        held = releasing(self.held, lock_id)
        if held is None:
            return
        self._stop_renewing()
        with self._mutex:
            if self.etag is not None and not self.lost:
                self.calls.put(self.key, self._body(held, released=True), if_match=self.etag)
            self.held, self.etag = None, None

    def current_lock(self) -> LockInfo | None:
        if self.held is not None:
            return self.held
        found = self._read()
        if found is None or found[0].get("released"):
            return None
        body = found[0]
        expires = body.get("expires_at")
        if isinstance(expires, int | float) and self.wall() > expires:
            return None
        return _holder(body)

    def force_unlock(self, lock_id: str) -> None:
        found = self._read()
        holder = None if found is None or found[0].get("released") else _holder(found[0])
        holder = breaking(holder, lock_id)
        assert found is not None  # the holder was read from it
        released = self.calls.put(self.key, self._body(holder, released=True), if_match=found[1])
        if released is None:
            raise LockMismatch("the lease changed while breaking it; look again")
