"""The StateBackend protocol every state backend (sqlite, s3, postgres) implements."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from state.model import CreateIntent, HistoryEntry, LockInfo, ResourceRecord, StateSnapshot

__all__ = ["StateBackend"]


@runtime_checkable
class StateBackend(Protocol):
    """Where recorded state lives.

    Contract shared by every backend:

    * ``read`` returns one consistent snapshot (one read transaction).
    * ``write_resource`` / ``delete_resource`` change one record and raise the serial by exactly
      one, in one transaction; they raise ``LineageMismatch`` when ``expected_lineage`` differs
      from the stored lineage, and return the new serial.
    * intents and history do not change the serial.
    * ``lock`` is a cross-process advisory lock that survives the holder being killed (so it
      can be detected as stale and force-unlocked); the caller takes it before writing.
    """

    def read(self) -> StateSnapshot:
        """A consistent snapshot of lineage, serial, resources and pending create intents."""
        ...

    def write_resource(self, record: ResourceRecord, *, expected_lineage: str) -> int:
        """Upsert ``record``, clear any create intent at its address, serial += 1.

        Returns the new serial.
        """
        ...

    def delete_resource(self, address: str, *, expected_lineage: str) -> int:
        """Remove the record at ``address`` (and its intent), serial += 1; returns the new serial.

        Raises ``ResourceNotFound`` when no record exists there.
        """
        ...

    def record_intent(self, address: str, token: str) -> CreateIntent:
        """Record that a create of ``address`` is starting with idempotency token ``token``.

        When an intent for ``address`` already exists it is kept and returned unchanged, so a
        resumed apply reuses the first token.
        """
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
        """Replace every record and intent by the snapshot's, in one transaction (``state push``).

        Refuses (``LineageMismatch``) a different lineage and (``SerialConflict``) a snapshot
        older than the stored serial unless ``force``; with ``force`` the snapshot's lineage is
        adopted. The serial becomes ``max(stored, snapshot.serial) + 1``, which is returned.
        """
        ...

    def lock(self, operation: str, *, timeout: float = 0, who: str | None = None) -> LockInfo:
        """Take the state lock, polling up to ``timeout`` seconds while someone else holds it.

        Raises ``StateLocked`` (carrying the holder's ``LockInfo``) when it stays held.
        """
        ...

    def unlock(self, lock_id: str) -> None:
        """Release the lock taken as ``lock_id``.

        No error when no lock is held; ``LockMismatch`` when a different lock is held.
        """
        ...

    def force_unlock(self, lock_id: str) -> None:
        """Remove the lock ``lock_id`` whoever holds it (``poolform force-unlock``).

        Raises ``LockMismatch`` when no lock or a different lock is held.
        """
        ...

    def current_lock(self) -> LockInfo | None:
        """The lock currently held, or None."""
        ...

    def close(self) -> None:
        """Release the backend's resources (idempotent). Does not release the lock."""
        ...
