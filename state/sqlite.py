"""The embedded default state backend: one SQLite database, ``.poolform/state.db``.

WAL journal, ``synchronous=NORMAL``; every write is one ``BEGIN IMMEDIATE`` transaction. In WAL
mode NORMAL loses no committed transaction when the process dies (kill -9 included): commits sit
in the WAL, which the next open replays. Only an OS crash or power loss can drop the last few,
and then the next refresh finds what they created by its tags. FULL would add an fsync per
change, the dominant cost of an apply (bench/README.md). The lock is
a row in the ``lock`` table (not a held transaction), so it is visible to every process and
outlives a holder killed with SIGKILL, where ``lock_is_stale`` detects it.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import astuple
from pathlib import Path
from types import TracebackType
from typing import Any

from state.errors import (
    LineageMismatch,
    LockMismatch,
    ResourceNotFound,
    SerialConflict,
    StateError,
    StateLocked,
)
from state.jsonformat import dump_attributes, snapshot_from_json, snapshot_to_json
from state.locking import acquire_polling, new_lock_info, utc_now
from state.model import CreateIntent, HistoryEntry, LockInfo, ResourceRecord, StateSnapshot
from state.sqlite_schema import SCHEMA_VERSION, create_schema

__all__ = ["DEFAULT_STATE_DIR", "DEFAULT_STATE_FILE", "SqliteStateBackend", "default_state_path"]

DEFAULT_STATE_DIR = ".poolform"
DEFAULT_STATE_FILE = "state.db"
_RESOURCE_COLUMNS = "address, kind, schema_version, attributes, provider_ids, dependencies, tainted"
_LOCK_COLUMNS = "lock_id, operation, who, pid, host, created, path, info"


def default_state_path(config_dir: str | os.PathLike[str]) -> Path:
    """``<config_dir>/.poolform/state.db``."""
    return Path(config_dir) / DEFAULT_STATE_DIR / DEFAULT_STATE_FILE


def _restrict(path: Path, mode: int) -> None:
    with suppress(FileNotFoundError):
        os.chmod(path, mode)


def _prepare_file(path: Path) -> None:
    """Create the parent directory (0700) and the database file (0600) before SQLite opens it."""
    parent = path.parent
    if not parent.exists():
        parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        _restrict(parent, 0o700)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    os.close(fd)
    _restrict(path, 0o600)


def _resource_row(record: ResourceRecord) -> tuple[Any, ...]:
    if not isinstance(record.address, str) or not record.address:
        raise StateError(f"invalid resource address {record.address!r}")
    where = f"resource {record.address!r}"
    return (
        record.address,
        record.resource_type,
        record.schema_version,
        dump_attributes(record.attributes, what=f"{where} attributes"),
        dump_attributes(dict(record.provider_ids), what=f"{where} provider_ids"),
        dump_attributes(list(record.dependencies), what=f"{where} dependencies"),
        int(record.tainted),
    )


class SqliteStateBackend:
    """StateBackend over a local SQLite file. Safe to share between threads of one process."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 10.0) -> None:
        self.path = Path(path)
        self._mutex = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        try:
            _prepare_file(self.path)
            conn = sqlite3.connect(
                self.path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise StateError(f"cannot open state database {self.path}: {exc}") from exc
        self._conn = conn
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StateError(
                    f"state database {self.path} has layout version {version}, newer than this "
                    f"poolform supports ({SCHEMA_VERSION}); upgrade poolform"
                )
            with self._txn() as tx:
                create_schema(tx, utc_now())
        except BaseException as exc:
            conn.close()
            self._conn = None
            if isinstance(exc, sqlite3.Error):
                raise StateError(f"cannot open state database {self.path}: {exc}") from exc
            raise
        for suffix in ("-wal", "-shm"):
            _restrict(Path(f"{self.path}{suffix}"), 0o600)

    # -- plumbing -------------------------------------------------------------------------

    def __enter__(self) -> SqliteStateBackend:
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
    def _txn(self, mode: str = "IMMEDIATE") -> Iterator[sqlite3.Connection]:
        """One transaction; sqlite errors become StateError, any exception rolls back."""
        with self._mutex:
            conn = self._conn
            if conn is None:
                raise StateError(f"state backend {self.path} is closed")
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
                if isinstance(exc, sqlite3.Error):
                    raise StateError(f"state database {self.path}: {exc}") from exc
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
        with self._txn("DEFERRED") as conn:
            lineage, serial = conn.execute("SELECT lineage, serial FROM meta").fetchone()
            query = f"SELECT {_RESOURCE_COLUMNS} FROM resources ORDER BY address"
            rows = conn.execute(query).fetchall()
            intent_rows = conn.execute("SELECT address, token, created FROM intents").fetchall()
        loads = json.loads
        records = {
            address: ResourceRecord(
                address, kind, loads(attrs), loads(pids), tuple(loads(deps)), bool(tainted), sv
            )
            for address, kind, sv, attrs, pids, deps, tainted in rows
        }
        intents = {row[0]: CreateIntent(*row) for row in intent_rows}
        return StateSnapshot(lineage, serial, records, intents)

    def write_resource(self, record: ResourceRecord, *, expected_lineage: str) -> int:
        row = _resource_row(record)
        with self._txn() as conn:
            self._check_lineage(conn, expected_lineage)
            serial = self._bump(conn)
            conn.execute(
                f"INSERT INTO resources ({_RESOURCE_COLUMNS}, updated_serial)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (address) DO UPDATE SET"
                " kind = excluded.kind, schema_version = excluded.schema_version,"
                " attributes = excluded.attributes, provider_ids = excluded.provider_ids,"
                " dependencies = excluded.dependencies, tainted = excluded.tainted,"
                " updated_serial = excluded.updated_serial",
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
        rows = [_resource_row(record) for record in snapshot]
        with self._txn() as conn:
            lineage, stored = conn.execute("SELECT lineage, serial FROM meta").fetchone()
            if snapshot.lineage != lineage and not force:
                raise LineageMismatch(
                    snapshot.lineage, lineage, hint="refusing to push a different state; force it"
                )
            if snapshot.serial < stored and not force:
                raise SerialConflict(snapshot.serial, stored)
            serial = max(stored, snapshot.serial) + 1
            conn.execute("UPDATE meta SET lineage = ?, serial = ?", (snapshot.lineage, serial))
            conn.execute("DELETE FROM resources")
            conn.executemany(
                f"INSERT INTO resources ({_RESOURCE_COLUMNS}, updated_serial)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(*row, serial) for row in rows],
            )
            conn.execute("DELETE FROM intents")
            conn.executemany(
                "INSERT INTO intents (address, token, created) VALUES (?, ?, ?)",
                [(i.address, i.token, i.created) for i in snapshot.intents.values()],
            )
        return serial

    def export_json(self) -> dict[str, Any]:
        """The ``state pull`` document (see ``state.jsonformat``)."""
        return snapshot_to_json(self.read())

    def import_json(self, document: dict[str, Any], *, force: bool = False) -> int:
        """``state push``: validate ``document`` and ``replace_all`` with it; the new serial."""
        return self.replace_all(snapshot_from_json(document), force=force)

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
        with self._txn() as conn:
            conn.execute("DELETE FROM intents WHERE address = ?", (address,))

    def append_history(self, entry: HistoryEntry) -> None:
        with self._txn() as conn:
            conn.execute(
                "INSERT INTO history (time, user, plan_hash, changes, outcome, serial)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    entry.time,
                    entry.user,
                    entry.plan_hash,
                    entry.changes,
                    entry.outcome,
                    entry.serial,
                ),
            )

    def history(self) -> list[HistoryEntry]:
        with self._txn("DEFERRED") as conn:
            rows = conn.execute(
                "SELECT time, user, plan_hash, changes, outcome, serial FROM history ORDER BY id"
            ).fetchall()
        return [HistoryEntry(*row) for row in rows]

    # -- locking --------------------------------------------------------------------------

    def lock(self, operation: str, *, timeout: float = 0, who: str | None = None) -> LockInfo:
        def attempt() -> LockInfo:
            info = new_lock_info(operation, who=who, path=str(self.path))
            with self._txn() as conn:
                row = conn.execute(f"SELECT {_LOCK_COLUMNS} FROM lock").fetchone()
                if row is not None:
                    raise StateLocked(LockInfo(*row))
                conn.execute(
                    f"INSERT INTO lock (id, {_LOCK_COLUMNS}) VALUES (1, ?, ?, ?, ?, ?, ?, ?, ?)",
                    astuple(info),
                )
            return info

        return acquire_polling(attempt, timeout)

    def current_lock(self) -> LockInfo | None:
        with self._txn("DEFERRED") as conn:
            row = conn.execute(f"SELECT {_LOCK_COLUMNS} FROM lock").fetchone()
        return None if row is None else LockInfo(*row)

    def unlock(self, lock_id: str) -> None:
        self._remove_lock(lock_id, missing_ok=True)

    def force_unlock(self, lock_id: str) -> None:
        self._remove_lock(lock_id, missing_ok=False)

    def _remove_lock(self, lock_id: str, *, missing_ok: bool) -> None:
        with self._txn() as conn:
            row = conn.execute("SELECT lock_id FROM lock").fetchone()
            if row is None:
                if missing_ok:
                    return
                raise LockMismatch(f"the state is not locked (no lock with ID {lock_id})")
            if row[0] != lock_id:
                raise LockMismatch(
                    f"the state lock is held under ID {row[0]}, not {lock_id}; nothing was unlocked"
                )
            conn.execute("DELETE FROM lock")
