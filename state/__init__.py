"""Recorded state: the StateBackend protocol, its embedded SQLite backend, and locking.

This package imports only the standard library (never ``reconciler`` or cloud SDKs).
"""

from state.errors import (
    LineageMismatch,
    LockMismatch,
    ResourceNotFound,
    SerialConflict,
    StateError,
    StateLocked,
    describe_lock,
    lock_is_stale,
)
from state.jsonformat import FORMAT_VERSION, snapshot_from_json, snapshot_to_json
from state.locking import default_who, lock_state
from state.model import CreateIntent, HistoryEntry, LockInfo, ResourceRecord, StateSnapshot
from state.protocol import StateBackend
from state.sqlite import (
    DEFAULT_STATE_DIR,
    DEFAULT_STATE_FILE,
    SqliteStateBackend,
    default_state_path,
)

__all__ = [
    "DEFAULT_STATE_DIR",
    "DEFAULT_STATE_FILE",
    "FORMAT_VERSION",
    "CreateIntent",
    "HistoryEntry",
    "LineageMismatch",
    "LockInfo",
    "LockMismatch",
    "ResourceNotFound",
    "ResourceRecord",
    "SerialConflict",
    "SqliteStateBackend",
    "StateBackend",
    "StateError",
    "StateLocked",
    "StateSnapshot",
    "default_state_path",
    "default_who",
    "describe_lock",
    "lock_is_stale",
    "lock_state",
    "snapshot_from_json",
    "snapshot_to_json",
]
