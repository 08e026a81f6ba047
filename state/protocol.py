"""The two halves of a state backend, as OpenTofu splits them: a store and a locker.

* ``StateStore``: the recorded state (read, one write per change, history, lineage, serial), the
  secret salt of sensitive values and the control-plane objects (resource pools, subject
  policies, compute configs) of clouds that have no such objects of their own.
* ``Locker``: one writer at a time, with the holder named; whether a dead holder frees the lock
  by itself.

``StateBackend`` is both, which is what every backend (SQLite, PostgreSQL, S3) implements. The
type checker holds each implementation to these protocols (see the ``_conforms`` functions at
the end of each backend module); nothing checks them at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from state.model import (
    ControlObject,
    CreateIntent,
    HistoryEntry,
    LockInfo,
    ResourceRecord,
    StateSnapshot,
)

__all__ = ["ControlPlaneStore", "Locker", "StateBackend", "StateStore"]


class ControlPlaneStore(Protocol):
    """Control-plane objects, kept with the state so every runner sees the same ones.

    Object changes do not raise the serial: the records that point at them do.
    """

    def list_objects(self, lineage: str) -> list[ControlObject]:
        """Every object tagged with ``lineage``, by object id."""
        ...

    def get_objects(self, object_ids: Sequence[str]) -> list[ControlObject]:
        """The objects with these ids (absent ones are left out)."""
        ...

    def put_object(self, obj: ControlObject, *, replaces: str | None = None) -> ControlObject:
        """Store a new object (and delete ``replaces``) in one change; when an object made with
        ``obj.token`` exists already, return it instead (a retried create makes no copy)."""
        ...

    def update_object(self, object_id: str, attributes: dict[str, Any]) -> ControlObject | None:
        """New attributes for an object; None when it does not exist."""
        ...

    def retag_object(
        self, object_id: str, address: str, lineage: str, tags: dict[str, str]
    ) -> ControlObject | None:
        """Take an object under another address/lineage (``poolform import``); None if absent."""
        ...

    def delete_object(self, object_id: str) -> bool:
        """Delete an object; False when it did not exist."""
        ...


class StateStore(ControlPlaneStore, Protocol):
    """Where recorded state lives.

    * ``exists`` is False until something was written: reading an absent state gives an empty
      snapshot with the lineage (and salt) it will be created with, and creates nothing.
    * ``read`` returns one consistent snapshot and raises ``DamagedRecords`` when a record
      cannot be read; ``read_salvaged`` returns the readable ones and names the others.
    * ``write_resource`` / ``delete_resource`` change one record and raise the serial by exactly
      one, in one durable change; ``LineageMismatch`` when ``expected_lineage`` is not the
      stored lineage. Intents, history and control-plane objects do not change the serial.
    """

    @property
    def location(self) -> str:
        """Where the state is, for messages (never a password)."""
        ...

    def exists(self) -> bool:
        """Whether a state has been created here."""
        ...

    def read(self) -> StateSnapshot:
        """A consistent snapshot; ``DamagedRecords`` when one record is unreadable."""
        ...

    def read_salvaged(self) -> StateSnapshot:
        """Like ``read``, but unreadable records are named in ``damaged`` instead of raising."""
        ...

    def write_resource(self, record: ResourceRecord, *, expected_lineage: str) -> int:
        """Upsert ``record``, clear any create intent at its address, serial += 1; new serial."""
        ...

    def delete_resource(self, address: str, *, expected_lineage: str) -> int:
        """Remove the record at ``address`` (readable or damaged) and its intent, serial += 1.

        Raises ``ResourceNotFound`` when no record exists there.
        """
        ...

    def record_intent(self, address: str, token: str) -> CreateIntent:
        """Record that a create of ``address`` starts with ``token``; an existing intent for the
        address is kept and returned, so a resumed apply reuses the first token. Writing it
        fails with ``LockLost`` when the lock this process took is gone, as every write does."""
        ...

    def clear_intent(self, address: str) -> None:
        """Forget the create intent at ``address`` (no error when there is none)."""
        ...

    def append_history(self, entry: HistoryEntry) -> None:
        """Append one line to the apply history."""
        ...

    def history(self) -> list[HistoryEntry]:
        """The apply history, oldest first."""
        ...

    def replace_all(self, snapshot: StateSnapshot, *, force: bool = False) -> int:
        """Replace every record and intent by the snapshot's in one change (``state push``).

        Refuses (``LineageMismatch``) a different lineage and (``SerialConflict``) an older
        snapshot unless ``force``; with ``force`` the snapshot's lineage is adopted. The serial
        becomes ``max(stored, snapshot.serial) + 1``, which is returned.
        """
        ...

    def salt(self, lineage: str) -> str:
        """The secret that salts hashes of sensitive values in the state of ``lineage``.

        Made once, with the state; never printed, never in a plan. ``LineageMismatch`` when the
        state has another lineage.
        """
        ...

    def adopt(
        self,
        snapshot: StateSnapshot,
        *,
        salt: str,
        history: Sequence[HistoryEntry],
        objects: Sequence[ControlObject],
    ) -> None:
        """Create this state as a copy of another (``state migrate``): lineage, serial, records,
        intents, salt, history and control-plane objects exactly as given. Refuses when a
        state exists here already."""
        ...

    def mark_moved(self, destination: str) -> None:
        """Record that ``state migrate`` moved this state to ``destination`` (a location
        without secrets): from now on opening it is an error that says where it went."""
        ...

    def all_objects(self) -> list[ControlObject]:
        """Every control-plane object, whatever its lineage (for ``state migrate``)."""
        ...

    def close(self) -> None:
        """Release the store's connections (idempotent). Does not release the lock."""
        ...


class Locker(Protocol):
    """A cross-process lock on one state, naming its holder."""

    @property
    def frees_dead_holder(self) -> bool:
        """True when a holder that dies (kill -9, lost machine) frees the lock by itself, at
        once or when its lease runs out, so no one ever needs ``force-unlock`` for it."""
        ...

    def lock(self, operation: str, *, timeout: float = 0, who: str | None = None) -> LockInfo:
        """Take the lock, waiting up to ``timeout`` seconds while someone else holds it.

        ``StateLocked`` (carrying the holder's ``LockInfo``) when it stays held. When the lock
        was taken over from a dead holder, the returned ``LockInfo.notice`` says so.
        """
        ...

    def unlock(self, lock_id: str) -> None:
        """Release the lock taken as ``lock_id``; no error when it is not held."""
        ...

    def force_unlock(self, lock_id: str) -> None:
        """Remove the lock ``lock_id`` whoever holds it; ``LockMismatch`` when no lock or
        another lock is held."""
        ...

    def current_lock(self) -> LockInfo | None:
        """The lock currently held, or None."""
        ...

    def confirm_held(self) -> None:
        """``LockLost`` when the lock this process took is no longer its own (an S3 lease that
        ran out and was taken over, a PostgreSQL session that ended), else nothing; nothing
        either when it holds no lock. Run before each change to the cloud: a holder paused past
        its lease (a laptop asleep at the confirmation prompt, SIGSTOP) finds out before it
        changes capacity another run now owns, not at the state write after it."""
        ...


class StateBackend(StateStore, Locker, Protocol):
    """A state store with its locker: what ``reconciler.workspace.open_state`` returns."""
