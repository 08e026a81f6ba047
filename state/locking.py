"""Lock helpers shared by backends: the wait for a held lock, and ``lock_state``.

The wait is tenacity's (the project's one retry library), with the clock and the sleep
injected so tests drive it with a fake clock instead of real time.
"""

from __future__ import annotations

import getpass
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

import tenacity

from state.errors import LockMismatch, StateLocked
from state.model import LockInfo
from state.protocol import Locker

__all__ = [
    "POLL_INTERVAL",
    "Clock",
    "Sleep",
    "breaking",
    "default_who",
    "lock_state",
    "new_lock_info",
    "releasing",
    "utc_now",
    "wait_for_lock",
]

POLL_INTERVAL = 0.05  # seconds between attempts while waiting for a held lock

Clock = Callable[[], float]
Sleep = Callable[[float], None]

# Where a takeover notice goes when the caller gives no `notify`: a warning on the "poolform"
# logger, which reaches stderr even when the application configured no logging.
logger = logging.getLogger("poolform.state")


def utc_now() -> str:
    """The current UTC time as an ISO 8601 string."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def default_who() -> str:
    """``user@host`` of this process."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return _text(f"{user}@{socket.gethostname()}")


def new_lock_info(
    operation: str, *, who: str | None = None, path: str = "", info: str = ""
) -> LockInfo:
    """A fresh LockInfo for this process, with a new uuid4 lock ID."""
    return LockInfo(
        lock_id=str(uuid.uuid4()),
        operation=operation,
        who=_text(who or default_who()),
        pid=os.getpid(),
        host=_text(socket.gethostname()),
        created=utc_now(),
        path=_text(path),
        info=_text(info),
    )


def _text(value: str) -> str:
    """`value` as text every backend stores: bytes that are not UTF-8 (a user name from $USER,
    a directory's name, as the OS hands them over) are kept as `\\xff` escapes."""
    try:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a lone surrogate no OS name holds
        return value.encode("utf-8", "backslashreplace").decode("utf-8")


def releasing(held: LockInfo | None, lock_id: str) -> LockInfo | None:
    """The lock of this process's (``held``) that an unlock of ``lock_id`` releases: None when
    it holds none; LockMismatch when it holds the lock under another ID."""
    if held is not None and held.lock_id != lock_id:
        raise LockMismatch(f"the state lock is held under ID {held.lock_id}, not {lock_id}")
    return held


def breaking(holder: LockInfo | None, lock_id: str) -> LockInfo:
    """The holder a ``force-unlock`` of ``lock_id`` breaks; LockMismatch, and nothing
    unlocked, when the lock is free or held under another ID."""
    if holder is None or holder.lock_id != lock_id:
        named = f"held under ID {holder.lock_id}" if holder else "not locked"
        raise LockMismatch(f"the state lock is {named}, not {lock_id}; nothing was unlocked")
    return holder


def wait_for_lock(
    try_once: Callable[[], LockInfo],
    timeout: float,
    *,
    clock: Clock = time.monotonic,
    sleep: Sleep = time.sleep,
    poll: float = POLL_INTERVAL,
) -> LockInfo:
    """Call ``try_once`` until it stops raising ``StateLocked`` or ``timeout`` seconds (on
    ``clock``) have passed; then the last ``StateLocked`` is raised."""
    start = clock()
    deadline = start + max(timeout, 0.0)

    def out_of_time(_: tenacity.RetryCallState) -> bool:
        return clock() >= deadline

    def until_next(_: tenacity.RetryCallState) -> float:
        return max(0.0, min(poll, deadline - clock()))

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception_type(StateLocked),
        stop=out_of_time,
        wait=until_next,
        sleep=sleep,
        reraise=True,
    )
    result: LockInfo = retrying(try_once)
    return result


@contextmanager
def lock_state(
    backend: Locker,
    operation: str,
    timeout: float = 0,
    *,
    who: str | None = None,
    notify: Callable[[str], None] | None = None,
) -> Iterator[LockInfo]:
    """Hold the state lock for the body; release it on every exit path.

    When the lock was taken over from a holder that died, ``notify`` (default: a warning on the
    ``poolform.state`` logger, shown on stderr) gets the one-line notice. The lock is released on
    normal exit, on exceptions and on ``KeyboardInterrupt``/``SystemExit``; when the body
    raised, a failure to release never hides the body's error.
    """
    info = backend.lock(operation, timeout=timeout, who=who)
    if info.notice:
        (notify or logger.warning)(info.notice)
    try:
        yield info
    except BaseException as body_error:
        try:
            backend.unlock(info.lock_id)
        except Exception as unlock_error:  # keep the body's exception, note ours on it
            body_error.add_note(f"also failed to release state lock {info.lock_id}: {unlock_error}")
        raise
    backend.unlock(info.lock_id)
