"""What the three state backends (SQLite, PostgreSQL, S3) do word for word.

An absent state reads as an empty snapshot under the lineage and salt it will be created with
(``state.fresh``), and its salt is known before it exists; a whole read refuses damaged
records; a push takes its new serial after the same three checks. Each backend mixes
``StoreBase`` in and supplies ``location`` and ``read_salvaged``.
"""

from __future__ import annotations

from state.errors import DamagedRecords, LineageMismatch, SerialConflict, StateError
from state.fresh import FreshState, created, fresh_salt, fresh_state_for
from state.model import StateSnapshot
from state.records import MAX_SERIAL

__all__ = ["StoreBase", "push_serial"]


class StoreBase:
    """Mixed into a state backend; the backend supplies what differs."""

    _fresh: FreshState | None  # set by the backend's __init__ (None), and by its `adopt`

    @property
    def location(self) -> str:
        raise NotImplementedError

    def read_salvaged(self) -> StateSnapshot:
        raise NotImplementedError

    def _fresh_key(self) -> str:
        """Where the state is, as ``state.fresh`` keys it (one key for every store opened on
        the same absent state in this process)."""
        return self.location

    def _fresh_state(self) -> FreshState:
        if self._fresh is None:
            self._fresh = fresh_state_for(self._fresh_key())
        return self._fresh

    def _created(self) -> None:
        created(self._fresh_key())

    def read(self) -> StateSnapshot:
        snapshot = self.read_salvaged()
        if snapshot.damaged:
            raise DamagedRecords(dict(snapshot.damaged), self.location)
        return snapshot

    def _exists_already(self) -> StateError:
        """What copying a state (``adopt``) over one that exists says."""
        return StateError(f"a state exists at {self.location} already; refusing to overwrite it")

    def _salt_before_state(self, lineage: str) -> str:
        """The salt of ``lineage`` while no state exists: the one the state will be created
        with, or one this process made up for another absent state."""
        fresh = self._fresh_state()
        known = fresh.salt if lineage == fresh.lineage else fresh_salt(lineage)
        if known is None:
            raise LineageMismatch(lineage, fresh.lineage, hint="there is no state yet")
        return known


def push_serial(pushed: StateSnapshot, lineage: str, stored: int, *, force: bool) -> int:
    """The serial a pushed snapshot is stored at, over a state of ``lineage`` at serial
    ``stored``: refused when it is another lineage's or older, unless forced (in the same
    words whichever backend holds the state)."""
    if pushed.lineage != lineage and not force:
        raise LineageMismatch.pushed(pushed.lineage, lineage)
    if pushed.serial < stored and not force:
        raise SerialConflict(pushed.serial, stored)
    serial = int(max(stored, pushed.serial)) + 1
    if serial > MAX_SERIAL:
        raise StateError(f"the serial would pass {MAX_SERIAL}; refusing to push")
    return serial
