"""The SQLite state's database file: opening it, creating it whole, and its transactions.

Nothing is created until something is written. A database is created whole, in a temporary
file linked into place, so no reader ever sees a half-made one; an existing file that is not a
whole poolform state (empty, another program's, missing a table or its meta row, a newer
layout) is an error naming the damage, never a fresh state. A layout-1 database is migrated
as it is opened. SQLite's errors become state errors (damage, a full or failing disk).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import astuple
from pathlib import Path

from state.errors import StateDamaged, StateError, StateMoved
from state.fresh import FreshState, new_salt
from state.locking import utc_now
from state.model import LockInfo
from state.sqlite_schema import create_schema, inspect_layout, migrate
from state.store_base import StoreBase

__all__ = [
    "LEGACY_SECRET",
    "SENSITIVE_MARK",
    "SqliteFile",
    "disk_trouble",
    "legacy_salt",
]

LEGACY_SECRET = "secret"  # layout 1 kept the salt's key in this file beside the database
SENSITIVE_MARK = "sensitive:sha256:"  # how a salted hash of a sensitive value starts
_LOCK_COLUMNS = "lock_id, operation, who, pid, host, created, path, info"


def legacy_salt(database: Path, lineage: str) -> str | None:
    """The salt layout 1 derived from the ``secret`` file beside the database, if it is there."""
    try:
        key = (database.parent / LEGACY_SECRET).read_text().strip().encode()
    except FileNotFoundError:
        return None
    return hmac.new(key, lineage.encode(), hashlib.sha256).hexdigest()


class SqliteFile(StoreBase):
    """One SQLite database file, its connection shared by the threads of one process."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 10.0) -> None:
        self.path = Path(path)
        self.busy_timeout = busy_timeout
        self._mutex = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._fresh: FreshState | None = None
        self.lock_row: LockInfo | None = None  # the holder the lock table names, when locked
        if self.path.exists() or self.path.is_symlink():
            self._conn = self._open_existing()

    @property
    def location(self) -> str:
        return str(self.path)

    def _fresh_key(self) -> str:
        return str(self.path.absolute())

    # -- opening and creating --------------------------------------------------------------

    def _open_existing(self) -> sqlite3.Connection:
        where = str(self.path)
        if self.path.is_symlink() and not self.path.exists():
            # Never a new state: the database it pointed at is elsewhere (an unmounted volume,
            # a moved directory), and a new one would create every resource again.
            raise StateError(
                f"the state path {where} is a symbolic link to {os.readlink(self.path)}, which "
                "does not exist (or loops): restore what it points at, or remove the link only "
                "if nothing was ever applied from here"
            )
        if self.path.is_dir():
            raise StateError(f"the state path {where} is a directory, not a database file")
        try:
            size = self.path.stat().st_size
        except OSError as exc:
            raise StateError(f"cannot open state database {where}: {exc}") from exc
        if size == 0:
            raise StateDamaged(
                f"state database {where} is empty (0 bytes): it was truncated or never "
                "written. Restore it from a backup; remove it only if nothing was ever applied "
                "from here (a new state would create every resource again)"
            )
        try:
            conn = sqlite3.connect(
                self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise StateError(f"cannot open state database {where}: {exc}") from exc
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            version = inspect_layout(conn, where)
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            if version < 2:
                self._migrate(conn, version)
            (moved,) = conn.execute("SELECT moved_to FROM meta").fetchone()
            if moved:
                raise StateMoved(where, moved)
        except sqlite3.DatabaseError as exc:
            conn.close()
            trouble = disk_trouble(where, self.path, exc)
            if trouble is not None:
                raise trouble from exc
            raise StateDamaged(f"{where} is not a readable poolform state database: {exc}") from exc
        except BaseException:
            conn.close()
            raise
        return conn

    def _migrate(self, conn: sqlite3.Connection, version: int) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = conn.execute("PRAGMA user_version").fetchone()[0]
            if current < 2:  # not migrated by another process meanwhile
                (lineage,) = conn.execute("SELECT lineage FROM meta").fetchone()
                salt = legacy_salt(self.path, lineage)
                if salt is None and not self._has_sensitive(conn):
                    salt = new_salt()
                migrate(conn, current, salt)
            conn.execute("COMMIT")
        except BaseException:
            conn.rollback()
            raise

    @staticmethod
    def _has_sensitive(conn: sqlite3.Connection) -> bool:
        query = "SELECT 1 FROM resources WHERE instr(attributes, ?) > 0 LIMIT 1"
        return conn.execute(query, (SENSITIVE_MARK,)).fetchone() is not None

    def _current(self) -> sqlite3.Connection | None:
        """The open database, opening one another process created since; None if absent."""
        if self._conn is None and self.path.exists():
            self._conn = self._open_existing()
        return self._conn

    def _create(self) -> sqlite3.Connection:
        """Make the database whole in a temporary file and link it into place; when another
        process linked one first, that one is used (and our lineage no longer matches)."""
        fresh = self._fresh_state()
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_name(f".{self.path.name}.{os.getpid()}.{uuid.uuid4().hex}")
        try:
            os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            conn = sqlite3.connect(temporary, isolation_level=None)
            try:
                conn.execute("BEGIN IMMEDIATE")
                create_schema(conn, fresh.lineage, 0, fresh.salt, utc_now())
                if self.lock_row is not None:
                    self._insert_holder(conn, self.lock_row)
                conn.execute("COMMIT")
            finally:
                conn.close()
            fd = os.open(temporary, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            with suppress(FileExistsError):  # another process made it first: use theirs
                os.link(temporary, self.path)
        except (OSError, sqlite3.Error) as exc:
            raise StateError(f"cannot create state database {self.path}: {exc}") from exc
        finally:
            temporary.unlink(missing_ok=True)
        self._created()
        self._conn = self._open_existing()
        return self._conn

    @staticmethod
    def _insert_holder(conn: sqlite3.Connection, info: LockInfo) -> None:
        """The row naming the lock holder (inside the caller's transaction)."""
        conn.execute(
            f"INSERT INTO lock (id, {_LOCK_COLUMNS}) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)",
            astuple(info)[:8],
        )

    def exists(self) -> bool:
        with self._mutex:
            return self._current() is not None

    def close(self) -> None:
        with self._mutex:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextmanager
    def _txn(self, mode: str = "IMMEDIATE", *, create: bool = True) -> Iterator[sqlite3.Connection]:
        """One transaction (creating the database first when ``create`` and it is absent);
        sqlite errors become StateError, any exception rolls back."""
        with self._mutex:
            conn = self._current()
            if conn is None:
                if not create:
                    raise StateError(f"no state at {self.path}")
                conn = self._create()
            try:
                conn.execute(f"BEGIN {mode}")
            except sqlite3.Error as exc:
                raise StateError(f"state database {self.path}: {exc}") from exc
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException as exc:
                if conn.in_transaction:
                    conn.rollback()
                if isinstance(exc, sqlite3.DatabaseError) and "malformed" in str(exc):
                    raise StateDamaged(f"state database {self.path} is damaged: {exc}") from exc
                if isinstance(exc, sqlite3.Error):
                    trouble = disk_trouble(f"state database {self.path}", self.path, exc)
                    raise trouble or StateError(f"state database {self.path}: {exc}") from exc
                raise


# SQLite's primary result codes for a disk that cannot take a write (sqlite3.h).
SQLITE_IOERR, SQLITE_FULL = 10, 13


def disk_trouble(where: str, path: Path, error: sqlite3.Error) -> StateError | None:
    """A state the disk under it could not write (full, or failing) is no damaged state:
    opening one writes (its -wal and -shm files), and SQLite then says `disk I/O error` or
    `database or disk is full`, which read as corruption under "not a readable poolform state
    database". None for any other error."""
    code = getattr(error, "sqlite_errorcode", 0) & 0xFF
    if code not in (SQLITE_IOERR, SQLITE_FULL):
        return None
    try:
        stats = os.statvfs(path.parent)
        full = stats.f_bavail == 0 or (stats.f_files > 0 and stats.f_favail == 0)
    except OSError:
        full = code == SQLITE_FULL
    said = "the disk holding it is full" if full else "its disk could not be written"
    return StateError(
        f"{where}: {said} (SQLite: {error}); the state itself is unchanged. Free space on "
        "that disk (or make it writable), then run the command again"
    )
