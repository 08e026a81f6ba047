"""The SQLite state's records, intents, history and salt: every change one transaction."""

from __future__ import annotations

import sqlite3
from dataclasses import astuple
from typing import Any

from state.errors import LineageMismatch, ResourceNotFound, StateError
from state.locking import utc_now
from state.model import CreateIntent, HistoryEntry, ResourceRecord, StateSnapshot
from state.records import StoredRecord, decode_record, encode_record
from state.sqlite_file import LEGACY_SECRET, SqliteFile, legacy_salt
from state.store_base import push_serial

__all__ = ["INSERT_HISTORY", "SqliteRecords"]

_RESOURCE_COLUMNS = (
    "address, kind, schema_version, attributes, provider_ids, dependencies, tainted, checksum"
)
INSERT_HISTORY = (
    "INSERT INTO history (time, user, plan_hash, changes, outcome, serial)"
    " VALUES (?, ?, ?, ?, ?, ?)"
)


def _decode_text(value: bytes | str | int | None) -> Any:
    return value.decode("utf-8") if isinstance(value, bytes) else value


class SqliteRecords(SqliteFile):
    """The StateStore half of the SQLite store, but for the control-plane objects
    (state/sql_objects.py) and whole copies (state/sqlite.py)."""

    @staticmethod
    def _check_lineage(conn: sqlite3.Connection, expected: str) -> None:
        (actual,) = conn.execute("SELECT lineage FROM meta").fetchone()
        if actual != expected:
            raise LineageMismatch.replaced(expected, actual)

    @staticmethod
    def _bump(conn: sqlite3.Connection) -> int:
        conn.execute("UPDATE meta SET serial = serial + 1")
        serial: int = conn.execute("SELECT serial FROM meta").fetchone()[0]
        return serial

    # -- records --------------------------------------------------------------------------

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
            serial = push_serial(snapshot, lineage, stored, force=force)
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
            conn.execute(INSERT_HISTORY, astuple(entry))

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
                return self._salt_before_state(lineage)
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
