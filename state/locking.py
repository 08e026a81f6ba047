"""Lock helpers shared by backends, and the ``lock_state`` context manager."""

from __future__ import annotations

import getpass
import os
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from state.errors import StateLocked
from state.model import LockInfo
from state.protocol import StateBackend

__all__ = ["acquire_polling", "default_who", "lock_state", "new_lock_info", "utc_now"]

POLL_INTERVAL = 0.05  # seconds between attempts while waiting for a held lock


def utc_now() -> str:
    """The current UTC time as an ISO 8601 string."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def default_who() -> str:
    """``user@host`` of this process."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = str(os.getuid())
    return f"{user}@{socket.gethostname()}"


def new_lock_info(
    operation: str, *, who: str | None = None, path: str = "", info: str = ""
) -> LockInfo:
    """A fresh LockInfo for this process, with a new uuid4 lock ID."""
    return LockInfo(
        lock_id=str(uuid.uuid4()),
        operation=operation,
        who=who or default_who(),
        pid=os.getpid(),
        host=socket.gethostname(),
        created=utc_now(),
        path=path,
        info=info,
    )


def acquire_polling(
    try_once: Callable[[], LockInfo], timeout: float, poll: float = POLL_INTERVAL
) -> LockInfo:
    """Call ``try_once`` until it stops raising ``StateLocked`` or ``timeout`` seconds pass."""
    deadline = time.monotonic() + max(timeout, 0.0)
    while True:
        try:
            return try_once()
        except StateLocked:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise
            time.sleep(min(poll, remaining))


@contextmanager
def lock_state(
    backend: StateBackend, operation: str, timeout: float = 0, *, who: str | None = None
) -> Iterator[LockInfo]:
    """Hold the state lock for the body; release it on every exit path.

    The lock is released on normal exit, on exceptions and on ``KeyboardInterrupt``/
    ``SystemExit``. When the body raised, a failure to release never hides the body's error.
    """
    info = backend.lock(operation, timeout=timeout, who=who)
    try:
        yield info
    except BaseException as body_error:
        try:
            backend.unlock(info.lock_id)
        except Exception as unlock_error:  # keep the body's exception, note ours on it
            body_error.add_note(f"also failed to release state lock {info.lock_id}: {unlock_error}")
        raise
    backend.unlock(info.lock_id)
