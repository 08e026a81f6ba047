"""The embedded state backend: a SQLite database beside the configuration, and a file lock.

Nothing is created until something is written: an absent database reads as an empty state
under the lineage it will be created with (``state.fresh``). The store is put together from
its parts: the database file, its creation and transactions (``state.sqlite_file``), the
records, intents, history and salt (``state.sqlite_records``) and the control-plane objects
(``state.sql_objects``); here are whole copies, the row naming the lock holder, and the
backend that adds the file lock.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import astuple
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from state.filelock import FileLock, lock_path_for
from state.fresh import FreshState
from state.locking import Clock, Sleep
from state.model import ControlObject, HistoryEntry, LockInfo, StateSnapshot
from state.records import encode_record
from state.sql_objects import SqlObjectTable
from state.sqlite_file import SENSITIVE_MARK
from state.sqlite_records import INSERT_HISTORY, SqliteRecords

__all__ = [
    "DEFAULT_STATE_DIR",
    "DEFAULT_STATE_FILE",
    "SENSITIVE_MARK",
    "SqliteStateBackend",
    "SqliteStore",
    "default_state_path",
]

DEFAULT_STATE_DIR = ".poolform"
DEFAULT_STATE_FILE = "state.db"


def default_state_path(config_dir: str | os.PathLike[str]) -> Path:
    """``<config_dir>/.poolform/state.db``."""
    return Path(config_dir) / DEFAULT_STATE_DIR / DEFAULT_STATE_FILE


class SqliteStore(SqliteRecords, SqlObjectTable):
    """StateStore over a local SQLite file. Safe to share between threads of one process."""

    _mark = "?"

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- whole copies (state migrate) -----------------------------------------------------

    def adopt(
        self,
        snapshot: StateSnapshot,
        *,
        salt: str,
        history: Sequence[HistoryEntry],
        objects: Sequence[ControlObject],
    ) -> None:
        with self._mutex:
            if self._current() is not None:
                raise self._exists_already()
            self._fresh = FreshState(snapshot.lineage, salt)
            rows = [astuple(encode_record(record)) for record in snapshot]
            with self._txn() as conn:
                self._check_lineage(conn, snapshot.lineage)
                conn.execute("UPDATE meta SET serial = ?", (snapshot.serial,))
                self._put_records(conn, rows, snapshot, snapshot.serial)
                conn.executemany(INSERT_HISTORY, [astuple(entry) for entry in history])
                for obj in objects:
                    self._insert_object(conn, obj)

    def mark_moved(self, destination: str) -> None:
        with self._txn() as conn:
            conn.execute("UPDATE meta SET moved_to = ?", (destination,))

    # -- control-plane objects (state/sql_objects.py) -------------------------------------

    def _objects_table(self) -> str:
        return "objects"

    def _objects_read(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._txn("DEFERRED")

    def _objects_write(self) -> AbstractContextManager[sqlite3.Connection]:
        return self._txn()

    # -- the row naming the lock holder ---------------------------------------------------

    def name_holder(self, info: LockInfo | None) -> None:
        """Write (or, with None, clear) the row naming the lock holder, when a state exists;
        a state created later names the holder as it is created."""
        with self._mutex:
            self.lock_row = info
            if self._current() is None:
                return
            with self._txn() as conn:
                conn.execute("DELETE FROM lock")
                if info is not None:
                    self._insert_holder(conn, info)


class SqliteStateBackend(SqliteStore):
    """The SQLite store with its file lock (``state.lock`` beside the database)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout: float = 10.0,
        directory: str = "",
        clock: Clock = time.monotonic,
        sleep: Sleep = time.sleep,
    ) -> None:
        super().__init__(path, busy_timeout=busy_timeout)
        self.locker = FileLock(
            lock_path_for(self.path),
            state_path=str(self.path),
            directory=directory,
            leave_nothing=lambda: not self.path.exists(),
            clock=clock,
            sleep=sleep,
        )

    def __enter__(self) -> SqliteStateBackend:
        return self

    @property
    def frees_dead_holder(self) -> bool:
        return True

    def lock(self, operation: str, *, timeout: float = 0, who: str | None = None) -> LockInfo:
        info = self.locker.lock(operation, timeout=timeout, who=who)
        try:
            self.name_holder(info)
        except BaseException:
            self.locker.unlock(info.lock_id)
            raise
        return info

    def unlock(self, lock_id: str) -> None:
        held = self.locker.held
        try:
            if held is not None and held.lock_id == lock_id:
                self.name_holder(None)
        finally:
            self.locker.unlock(lock_id)

    def force_unlock(self, lock_id: str) -> None:
        self.locker.force_unlock(lock_id)
        if self.exists():
            with self._txn() as conn:
                conn.execute("DELETE FROM lock WHERE lock_id = ?", (lock_id,))

    def current_lock(self) -> LockInfo | None:
        return self.locker.current_lock()

    def confirm_held(self) -> None:
        """An OS lock is this process's until it ends: the kernel never hands it to another."""

    def close(self) -> None:
        """Close the database, and release the lock if this backend still holds it."""
        try:
            held = self.locker.held
            if held is not None:
                self.unlock(held.lock_id)
        finally:
            super().close()


if TYPE_CHECKING:
    from state.protocol import StateBackend, StateStore

    def _conforms(
        store: SqliteStore, backend: SqliteStateBackend
    ) -> tuple[StateStore, StateBackend]:
        return store, backend
