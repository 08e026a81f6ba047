"""``state migrate``: copy a whole state to another backend, under both locks, and verify it.

Lineage, serial, records, intents, history, the salt and the control-plane objects are copied
exactly; then everything is read back from the target and compared. Only when the copy is equal
is the source marked as moved, so a runner still pointed at it is refused with where the state
went, instead of writing to a fork of it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from state.errors import StateError, StateLocked, StateMoved
from state.locking import lock_state
from state.protocol import StateBackend

if TYPE_CHECKING:
    from collections.abc import Sequence

    from state.model import ControlObject, HistoryEntry, StateSnapshot

__all__ = ["Migrated", "migrate", "moving_back"]


@dataclass(frozen=True)
class Migrated:
    source: str
    target: str
    lineage: str
    serial: int
    resources: int
    history: int
    objects: int


def migrate(source: StateBackend, target: StateBackend, lock_timeout: float = 0) -> Migrated:
    """Copy ``source`` into the empty ``target``; StateError when anything differs after."""
    if _same_state(source, target):
        raise StateError(f"the source and the target are the same state ({source.location})")
    try:
        with (
            _locked(source, lock_timeout),
            _locked(target, lock_timeout),
        ):
            return _copy(source, target)
    except StateMoved as moved:
        raise moving_back(moved, source.location, target.location) from None


@contextmanager
def _locked(backend: StateBackend, lock_timeout: float) -> Iterator[None]:
    """The lock of one of the two states; held by another, the refusal says which state."""
    try:
        with lock_state(backend, "state migrate", lock_timeout):
            yield
    except StateLocked as locked:
        if locked.location:
            raise
        raise StateLocked(locked.holder, detail=locked.detail, location=backend.location) from None


def moving_back(moved: StateMoved, source: str, target: str) -> StateError:
    """The error for a target found marked as moved: when it was moved to this very source,
    it is the old copy the user is asking to go back to, and its marker's "point the Cluster
    at the new place" would mislead (they did, before asking)."""
    if moved.destination != source:
        return moved
    return StateError(
        f"{target} is the old copy this state was moved from (marked as moved to {source}); "
        "a state is not moved back over its old copy, which may be older: migrate to another "
        "place, or remove the old copy first"
    )


def _copy(source: StateBackend, target: StateBackend) -> Migrated:
    """Copy under both locks (held by `migrate`) and verify."""
    if not source.exists():
        raise StateError(f"there is no state at {source.location} to copy")
    snapshot = source.read()
    salt = source.salt(snapshot.lineage)
    history = source.history()
    objects = source.all_objects()
    if target.exists():
        # An earlier migrate killed (or cut off) after its copy was made and before it
        # marked the source moved left exactly this copy: finish it. Anything else there
        # (another state, or a copy the source has moved on from) is never overwritten.
        left = _differences(target, snapshot, salt, history, objects)
        if left == ["lineage"]:
            raise StateError(
                f"a state exists at {target.location} already; refusing to overwrite it"
            )
        if left:
            raise StateError(
                f"a state exists at {target.location} already, a copy of this state that "
                f"differs from it in its {', '.join(left)} (the source moved on since it "
                "was copied); refusing to overwrite it"
            )
    else:
        target.adopt(snapshot, salt=salt, history=history, objects=objects)
    differs = _differences(target, snapshot, salt, history, objects)
    if differs:
        raise StateError(
            f"the copy at {target.location} differs from {source.location} in its "
            f"{', '.join(differs)}; the source is left as it was"
        )
    source.mark_moved(target.location)
    return Migrated(
        source.location,
        target.location,
        snapshot.lineage,
        snapshot.serial,
        len(snapshot),
        len(history),
        len(objects),
    )


def _differences(
    target: StateBackend,
    snapshot: StateSnapshot,
    salt: str,
    history: Sequence[HistoryEntry],
    objects: Sequence[ControlObject],
) -> list[str]:
    """What of the source's state the target does not hold exactly ([]: a whole copy)."""
    copied = target.read()
    if copied.lineage != snapshot.lineage:
        return ["lineage"]
    return [
        what
        for what, same in (
            ("records, lineage or serial", copied == snapshot),
            ("salt", target.salt(snapshot.lineage) == salt),
            ("history", target.history() == history),
            ("control-plane objects", target.all_objects() == objects),
        )
        if not same
    ]


def _same_state(source: StateBackend, target: StateBackend) -> bool:
    """The same location, or two spellings of one file (`a/../a/state.db`, a link to it)."""
    if source.location == target.location:
        return True
    mine, theirs = getattr(source, "path", None), getattr(target, "path", None)
    if not isinstance(mine, Path) or not isinstance(theirs, Path):
        return False
    try:
        return os.path.samefile(mine, theirs)
    except OSError:  # one of them is not there (yet)
        return False
