"""The lineage and salt a state will be created with, before it exists.

Reading an absent state creates nothing: it reads as an empty snapshot under a new lineage. That
lineage and the salt it will be created with are kept here, in this process only and keyed by
the state's location, so that every store opened on the same absent state in this process (the
plan's read, the salt's lookup, the apply that finally writes) agrees on them. Once a state is
created at a location its entry is dropped: a state deleted later starts a new lineage.
"""

from __future__ import annotations

import secrets
import threading
import uuid
from dataclasses import dataclass

__all__ = ["FreshState", "created", "fresh_salt", "fresh_state_for", "new_salt"]

_lock = threading.Lock()
_by_location: dict[str, FreshState] = {}
_salts: dict[str, str] = {}


@dataclass(frozen=True, slots=True)
class FreshState:
    """A lineage and salt for a state not created yet."""

    lineage: str
    salt: str


def new_salt() -> str:
    return secrets.token_hex(32)


def fresh_state_for(location: str) -> FreshState:
    """The lineage and salt the absent state at ``location`` will be created with."""
    with _lock:
        fresh = _by_location.get(location)
        if fresh is None:
            fresh = FreshState(str(uuid.uuid4()), new_salt())
            _by_location[location] = fresh
            _salts[fresh.lineage] = fresh.salt
        return fresh


def created(location: str) -> None:
    """The state at ``location`` exists now: forget what it was going to be."""
    with _lock:
        _by_location.pop(location, None)


def fresh_salt(lineage: str) -> str | None:
    """The salt of a lineage this process made up for an absent state, if it did."""
    with _lock:
        return _salts.get(lineage)
