"""The embedded state backend: a SQLite database beside the configuration, and a file lock.

Nothing is created until something is written: an absent database reads as an empty state
under the lineage it will be created with (``state.fresh``). A database is created whole, in a
temporary file linked into place, so no reader ever sees a half-made one; an existing file that
is not a whole poolform state (empty, another program's, missing a table or its meta row, a
newer layout) is an error naming the damage, never a fresh state.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import astuple
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from state.errors import (
    DamagedRecords,
    LineageMismatch,
    ResourceNotFound,
    SerialConflict,
    StateDamaged,
    StateError,
    StateMoved,
)
from state.filelock import FileLock, lock_path_for
from state.fresh import FreshState, created, fresh_salt, fresh_state_for, new_salt
from state.locking import Clock, Sleep, utc_now
from state.model import (
    ControlObject,
    CreateIntent,
    HistoryEntry,
    LockInfo,
    ResourceRecord,
    StateSnapshot,
)
from state.records import (
    MAX_SERIAL,
    StoredRecord,
    decode_record,
    encode_record,
)
from state.sql_objects import SqlObjectTable
from state.sqlite_schema import create_schema, inspect_layout, migrate

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
LEGACY_SECRET = "secret"  # layout 1 kept the salt's key in this file beside the database
SENSITIVE_MARK = "sensitive:sha256:"  # how a salted hash of a sensitive value starts
_RESOURCE_COLUMNS = (
    "address, kind, schema_version, attributes, provider_ids, dependencies, tainted, checksum"
)
_LOCK_COLUMNS = "lock_id, operation, who, pid, host, created, path, info"


def default_state_path(config_dir: str | os.PathLike[str]) -> Path:
    """``<config_dir>/.poolform/state.db``."""
    return Path(config_dir) / DEFAULT_STATE_DIR / DEFAULT_STATE_FILE


def legacy_salt(database: Path, lineage: str) -> str | None:
    """The salt layout 1 derived from the ``secret`` file beside the database, if it is there."""
    try:
        key = (database.parent / LEGACY_SECRET).read_text().strip().encode()
    except FileNotFoundError:
        return None
    return hmac.new(key, lineage.encode(), hashlib.sha256).hexdigest()


def _decode_text(value: bytes | str | int | None) -> Any:
    return value.decode("utf-8") if isinstance(value, bytes) else value


class SqliteStore(SqlObjectTable):
    """StateStore over a local SQLite file. Safe to share between threads of one process."""

    _mark = "?"

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

    def _fresh_state(self) -> FreshState:
        if self._fresh is None:
            self._fresh = fresh_state_for(str(self.path.absolute()))
        return self._fresh

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
                    conn.execute(
                        f"INSERT INTO lock (id, {_LOCK_COLUMNS}) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)",
                        astuple(self.lock_row)[:8],
                    )
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
        created(str(self.path.absolute()))
        self._conn = self._open_existing()
        return self._conn

    def exists(self) -> bool:
        with self._mutex:
            return self._current() is not None

    # -- plumbing -------------------------------------------------------------------------

    def __enter__(self) -> SqliteStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

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

    @staticmethod
    def _check_lineage(conn: sqlite3.Connection, expected: str) -> None:
        (actual,) = conn.execute("SELECT lineage FROM meta").fetchone()
        if actual != expected:
            raise LineageMismatch(expected, actual, hint="was the state replaced? plan again")

    @staticmethod
    def _bump(conn: sqlite3.Connection) -> int:
        conn.execute("UPDATE meta SET serial = serial + 1")
        serial: int = conn.execute("SELECT serial FROM meta").fetchone()[0]
        return serial

    # -- records --------------------------------------------------------------------------

    def read(self) -> StateSnapshot:
        snapshot = self.read_salvaged()
        if snapshot.damaged:
            raise DamagedRecords(dict(snapshot.damaged), str(self.path))
        return snapshot

    def read_salvaged(self) -> StateSnapshot:
        with self._mutex:
            if self._current() is None:
                return StateSnapshot(self._fresh_state().lineage, 0)
            with self._txn("DEFERRED", create=False) as conn:
                lineage, serial = conn.execute("SELECT lineage, serial FROM meta").fetchone()
                query = f"SELECT {_RESOURCE_COLUMNS} FROM resources ORDER BY address"
                try:
                    rows = conn.execute(query).fetchall()
                except sqlite3.OperationalError:  # a flipped byte made invalid UTF-8:
                    conn.text_factory = bytes  # read again, decoding row by row
                    try:
                        rows = conn.execute(query).fetchall()
                    finally:
                        conn.text_factory = str
                intent_rows = conn.execute("SELECT address, token, created FROM intents").fetchall()
        records: dict[str, ResourceRecord] = {}
        damaged: dict[str, str] = {}
        for row in rows:
            address = row[0] if isinstance(row[0], str) else row[0].decode("utf-8", "replace")
            try:
                fields = row if isinstance(row[3], str) else [_decode_text(v) for v in row]
                records[address] = decode_record(StoredRecord(*fields))
            except (ValueError, TypeError) as exc:
                damaged[address] = str(exc)
        intents = {row[0]: CreateIntent(*row) for row in intent_rows}
        return StateSnapshot(lineage, serial, records, intents, damaged)

    def write_resource(self, record: ResourceRecord, *, expected_lineage: str) -> int:
        row = astuple(encode_record(record))
        with self._txn() as conn:
            self._check_lineage(conn, expected_lineage)
            serial = self._bump(conn)
            conn.execute(
                f"INSERT INTO resources ({_RESOURCE_COLUMNS}, updated_serial)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (address) DO UPDATE SET"
                " kind = excluded.kind, schema_version = excluded.schema_version,"
                " attributes = excluded.attributes, provider_ids = excluded.provider_ids,"
                " dependencies = excluded.dependencies, tainted = excluded.tainted,"
                " checksum = excluded.checksum, updated_serial = excluded.updated_serial",
                (*row, serial),
            )
            conn.execute("DELETE FROM intents WHERE address = ?", (record.address,))
        return serial

    def delete_resource(self, address: str, *, expected_lineage: str) -> int:
        with self._txn() as conn:
            self._check_lineage(conn, expected_lineage)
            if conn.execute("DELETE FROM resources WHERE address = ?", (address,)).rowcount == 0:
                raise ResourceNotFound(address)
            conn.execute("DELETE FROM intents WHERE address = ?", (address,))
            return self._bump(conn)

    def replace_all(self, snapshot: StateSnapshot, *, force: bool = False) -> int:
        rows = [astuple(encode_record(record)) for record in snapshot]
        with self._txn() as conn:
            lineage, stored = conn.execute("SELECT lineage, serial FROM meta").fetchone()
            if snapshot.lineage != lineage and not force:
                raise LineageMismatch(
                    snapshot.lineage, lineage, hint="refusing to push a different state; force it"
                )
            if snapshot.serial < stored and not force:
                raise SerialConflict(snapshot.serial, stored)
            serial: int = max(stored, snapshot.serial) + 1
            if serial > MAX_SERIAL:
                raise StateError(f"the serial would pass {MAX_SERIAL}; refusing to push")
            conn.execute("UPDATE meta SET lineage = ?, serial = ?", (snapshot.lineage, serial))
            self._put_records(conn, rows, snapshot, serial)
        return serial

    @staticmethod
    def _put_records(
        conn: sqlite3.Connection, rows: list[tuple[Any, ...]], snapshot: StateSnapshot, serial: int
    ) -> None:
        conn.execute("DELETE FROM resources")
        conn.executemany(
            f"INSERT INTO resources ({_RESOURCE_COLUMNS}, updated_serial)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(*row, serial) for row in rows],
        )
        conn.execute("DELETE FROM intents")
        conn.executemany(
            "INSERT INTO intents (address, token, created) VALUES (?, ?, ?)",
            [(i.address, i.token, i.created) for i in snapshot.intents.values()],
        )

    # -- intents and history --------------------------------------------------------------

    def record_intent(self, address: str, token: str) -> CreateIntent:
        with self._txn() as conn:
            row = conn.execute(
                "SELECT token, created FROM intents WHERE address = ?", (address,)
            ).fetchone()
            if row is not None:
                return CreateIntent(address, row[0], row[1])
            intent = CreateIntent(address, token, utc_now())
            conn.execute(
                "INSERT INTO intents (address, token, created) VALUES (?, ?, ?)",
                (intent.address, intent.token, intent.created),
            )
        return intent

    def clear_intent(self, address: str) -> None:
        if self.exists():
            with self._txn() as conn:
                conn.execute("DELETE FROM intents WHERE address = ?", (address,))

    def append_history(self, entry: HistoryEntry) -> None:
        with self._txn() as conn:
            conn.execute(
                "INSERT INTO history (time, user, plan_hash, changes, outcome, serial)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                astuple(entry),
            )

    def history(self) -> list[HistoryEntry]:
        if not self.exists():
            return []
        with self._txn("DEFERRED") as conn:
            rows = conn.execute(
                "SELECT time, user, plan_hash, changes, outcome, serial FROM history ORDER BY id"
            ).fetchall()
        return [HistoryEntry(*row) for row in rows]

    # -- the salt -------------------------------------------------------------------------

    def salt(self, lineage: str) -> str:
        with self._mutex:
            if self._current() is None:
                fresh = self._fresh_state()
                known = fresh.salt if lineage == fresh.lineage else fresh_salt(lineage)
                if known is None:
                    raise LineageMismatch(lineage, fresh.lineage, hint="there is no state yet")
                return known
            with self._txn("DEFERRED") as conn:
                stored_lineage, salt = conn.execute("SELECT lineage, salt FROM meta").fetchone()
            if stored_lineage != lineage:
                raise LineageMismatch(lineage, stored_lineage)
            if salt is None:  # layout 1 whose secret file was missing when it was migrated
                salt = legacy_salt(self.path, lineage)
                if salt is None:
                    raise StateError(self._missing_secret_message())
                with self._txn() as conn:
                    conn.execute("UPDATE meta SET salt = ? WHERE salt IS NULL", (salt,))
        return str(salt)

    def _missing_secret_message(self) -> str:
        secret = self.path.parent / LEGACY_SECRET
        return (
            f"the secret that salted this state's sensitive values ({secret}) is missing: "
            "without it every resource with a sensitive value would look changed and be "
            f"replaced. Restore {secret} from a backup or from the checkout that applied this "
            "state (poolform then keeps it in the state itself)"
        )

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
                raise StateError(f"a state exists at {self.path} already; refusing to overwrite it")
            self._fresh = FreshState(snapshot.lineage, salt)
            rows = [astuple(encode_record(record)) for record in snapshot]
            with self._txn() as conn:
                self._check_lineage(conn, snapshot.lineage)
                conn.execute("UPDATE meta SET serial = ?", (snapshot.serial,))
                self._put_records(conn, rows, snapshot, snapshot.serial)
                conn.executemany(
                    "INSERT INTO history (time, user, plan_hash, changes, outcome, serial)"
                    " VALUES (?, ?, ?, ?, ?, ?)",
                    [astuple(entry) for entry in history],
                )
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
                    conn.execute(
                        f"INSERT INTO lock (id, {_LOCK_COLUMNS}) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)",
                        astuple(info)[:8],
                    )


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
