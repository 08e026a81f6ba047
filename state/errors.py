"""Typed errors raised by state backends, and stale-lock detection."""

from __future__ import annotations

import os
import socket

from state.model import LockInfo

__all__ = [
    "DamagedRecords",
    "LineageMismatch",
    "LockLost",
    "LockMismatch",
    "ResourceNotFound",
    "SerialConflict",
    "StateDamaged",
    "StateError",
    "StateForbidden",
    "StateLocked",
    "StateMoved",
    "StateUnavailable",
    "describe_lock",
    "lock_is_stale",
]


class StateError(Exception):
    """Base class of every error a state backend raises."""


class StateLocked(StateError):
    """The state lock is held by someone else; ``holder`` says who, where, when and why.

    ``directory`` (the configuration directory, when known) goes into the force-unlock hint.
    """

    def __init__(
        self,
        holder: LockInfo,
        *,
        directory: str = "",
        detail: str = "",
        location: str = "",
        lease_left: float | None = None,
    ) -> None:
        self.holder, self.detail = holder, detail
        # An S3 lease: the most a dead holder keeps the lock (seconds), which a suggested
        # --lock-timeout must cover; None for other locks, or when the lease does not say.
        self.lease_left = lease_left
        self.location = location  # which state, where a command locks two (state migrate)
        text = describe_lock(holder, directory=directory)
        super().__init__(f"{text}; {detail}" if detail else text)


class LockLost(StateError):
    """The lock this process held was taken by another (an expired lease): nothing more may be
    written, so a holder that lost its lock can never overwrite newer state."""


class StateDamaged(StateError):
    """The state at a location is damaged or is not a poolform state: never a fresh one."""


class StateMoved(StateError):
    """``state migrate`` moved this state elsewhere; ``destination`` says where."""

    def __init__(self, where: str, destination: str) -> None:
        self.destination = destination
        super().__init__(
            f"the state at {where} was moved to {destination} by `poolform state migrate`; "
            "point the Cluster's `state` settings at it"
        )


class StateForbidden(StateError):
    """The backend refused these credentials a read or a write (a read-only role, a bucket
    policy that only allows reading, a role never granted the schema): the lock is a write
    too, so a read-only run must not take it. `refused` is what the backend said; the message
    adds `needs`, the permissions reading and changing the state take, so that the user knows
    it is a permission problem and what to grant."""

    def __init__(self, refused: str, needs: str) -> None:
        self.refused, self.needs = refused, needs
        super().__init__(f"{refused} (a permission these credentials lack: {needs})")


class StateUnavailable(StateError):
    """The backend cannot be reached (server down, connection lost)."""


class DamagedRecords(StateError):
    """Records that cannot be read; ``damaged`` maps each address to what is wrong."""

    def __init__(self, damaged: dict[str, str], location: str) -> None:
        self.damaged = dict(damaged)
        names = "; ".join(f"{address}: {why}" for address, why in sorted(damaged.items()))
        first = min(damaged)
        super().__init__(
            f"the state at {location} has {len(damaged)} damaged record(s) ({names}); "
            f"refusing to plan or apply over it. `poolform state rm {first}` forgets a damaged "
            "record (the resource itself is not touched; `poolform import` takes it back)"
        )


# What every backend says when the state moved under a command, word for word (each said it
# its own way: "plan again", "was the state replaced? plan again", "force it", "refusing to
# push; force it"): what happened, that nothing was changed, and what to do.
WRITE_AGAIN = (
    "this change was not recorded; run `poolform plan` again, which reads the state as it is now"
)
PUSH_AGAIN = "nothing was pushed; pull the state again, or force the push"


class LineageMismatch(StateError):
    """The state belongs to a different lineage than the caller expected."""

    def __init__(self, expected: str, actual: str, *, hint: str = "", message: str = "") -> None:
        self.expected = expected
        self.actual = actual
        message = (
            message
            or f"state lineage mismatch: expected {expected}, but the stored state has lineage {actual}"
        )
        super().__init__(f"{message}; {hint}" if hint else message)

    @classmethod
    def replaced(cls, expected: str, actual: str) -> LineageMismatch:
        """A write refused: the state was replaced (another lineage) since it was read."""
        message = (
            f"the state was replaced since this command read it: it is now lineage {actual}, "
            f"not {expected} (a forced `state push` or a `state migrate`)"
        )
        return cls(expected, actual, message=message, hint=WRITE_AGAIN)

    @classmethod
    def pushed(cls, pushed: str, stored: str) -> LineageMismatch:
        """A push refused: the pushed snapshot is another lineage's than the stored state."""
        message = (
            f"refusing to push a state of lineage {pushed} over the stored state, which is "
            f"lineage {stored}"
        )
        return cls(pushed, stored, message=message, hint=PUSH_AGAIN)


class SerialConflict(StateError):
    """A pushed snapshot is older than the stored state."""

    def __init__(self, pushed: int, stored: int) -> None:
        self.pushed = pushed
        self.stored = stored
        super().__init__(
            f"refusing to push a state at serial {pushed} over the stored state, which is at "
            f"serial {stored} (changes were recorded since it was pulled); {PUSH_AGAIN}"
        )


class ResourceNotFound(StateError):
    """No record exists at the given address."""

    def __init__(self, address: str) -> None:
        self.address = address
        super().__init__(f"no resource at address {address!r} in the state")


class LockMismatch(StateError):
    """An unlock named a lock ID that is not the one currently held."""


def describe_lock(info: LockInfo, *, directory: str = "") -> str:
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
            f"run `poolform force-unlock {info.lock_id}{f' --chdir {directory}' if directory else ''}`"
            " to remove it"
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
