"""Typed errors raised by state backends, and stale-lock detection."""

from __future__ import annotations

import os
import socket

from state.model import LockInfo

__all__ = [
    "LineageMismatch",
    "LockMismatch",
    "ResourceNotFound",
    "SerialConflict",
    "StateError",
    "StateLocked",
    "describe_lock",
    "lock_is_stale",
]


class StateError(Exception):
    """Base class of every error a state backend raises."""


class StateLocked(StateError):
    """The state lock is held by someone else; ``holder`` says who, where, when and why."""

    def __init__(self, holder: LockInfo) -> None:
        self.holder = holder
        super().__init__(describe_lock(holder))


class LineageMismatch(StateError):
    """The state belongs to a different lineage than the caller expected."""

    def __init__(self, expected: str, actual: str, *, hint: str = "") -> None:
        self.expected = expected
        self.actual = actual
        message = f"state lineage mismatch: expected {expected}, but the stored state has lineage {actual}"
        super().__init__(f"{message}; {hint}" if hint else message)


class SerialConflict(StateError):
    """A pushed snapshot is older than the stored state."""

    def __init__(self, pushed: int, stored: int) -> None:
        self.pushed = pushed
        self.stored = stored
        super().__init__(
            f"refusing to replace state at serial {stored} with an older snapshot at serial "
            f"{pushed}; pull the state again, or force the push"
        )


class ResourceNotFound(StateError):
    """No record exists at the given address."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__(f"no resource at address {address!r} in the state")


class LockMismatch(StateError):
    """An unlock named a lock ID that is not the one currently held."""


def describe_lock(info: LockInfo) -> str:
    """One human-readable sentence naming the lock holder, for error messages."""
    text = (
        f"the state is locked by {info.who} (pid {info.pid} on {info.host}) since "
        f"{info.created} for operation {info.operation!r}; lock ID {info.lock_id}"
    )
    if info.path:
        text += f"; state {info.path}"
    if info.info:
        text += f"; {info.info}"
    if lock_is_stale(info):
        text += (
            "; the holding process is no longer running, so the lock is stale: "
            f"run `poolform force-unlock {info.lock_id}` to remove it"
        )
    return text


def lock_is_stale(info: LockInfo) -> bool:
    """True when the lock was taken on this host by a process that no longer exists.

    A lock from another host is never judged stale: its process cannot be checked from here.
    """
    if info.host != socket.gethostname() or info.pid <= 0:
        return False
    try:
        os.kill(info.pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # exists, owned by another user
        return False
    return False
