"""Recorded state: the StateStore and Locker protocols, their backends, and locking.

This package imports only the standard library and tenacity (never ``reconciler``); the
PostgreSQL and S3 backends import their client libraries only when opened.
"""

from state.errors import (
    DamagedRecords,
    LineageMismatch,
    LockLost,
    LockMismatch,
    ResourceNotFound,
    SerialConflict,
    StateDamaged,
    StateError,
    StateLocked,
    StateUnavailable,
    describe_lock,
    lock_is_stale,
)
from state.jsonformat import FORMAT_VERSION, snapshot_from_json, snapshot_to_json
from state.locking import default_who, lock_state
from state.model import (
    ControlObject,
    CreateIntent,
    HistoryEntry,
    LockInfo,
    ResourceRecord,
    StateSnapshot,
)
from state.protocol import ControlPlaneStore, Locker, StateBackend, StateStore
from state.sqlite import (
    DEFAULT_STATE_DIR,
    DEFAULT_STATE_FILE,
    SqliteStateBackend,
    SqliteStore,
    default_state_path,
)

__all__ = [
    "DEFAULT_STATE_DIR",
    "DEFAULT_STATE_FILE",
    "FORMAT_VERSION",
    "ControlObject",
    "ControlPlaneStore",
    "CreateIntent",
    "DamagedRecords",
    "HistoryEntry",
    "LineageMismatch",
    "LockInfo",
    "LockLost",
    "LockMismatch",
    "Locker",
    "ResourceNotFound",
    "ResourceRecord",
    "SerialConflict",
    "SqliteStateBackend",
    "SqliteStore",
    "StateBackend",
    "StateDamaged",
    "StateError",
    "StateLocked",
    "StateSnapshot",
    "StateStore",
    "StateUnavailable",
    "default_state_path",
    "default_who",
    "describe_lock",
    "lock_is_stale",
    "lock_state",
    "snapshot_from_json",
    "snapshot_to_json",
]
