"""The PostgreSQL state's records, intents, history and salt: every change one transaction,
or one statement where a single statement makes it (an apply's two per create)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import astuple
from typing import TYPE_CHECKING, Any

from state.errors import LineageMismatch, ResourceNotFound
from state.locking import utc_now
from state.model import CreateIntent, HistoryEntry, ResourceRecord, StateSnapshot
from state.postgres_connection import PostgresConnection
from state.records import StoredRecord, decode_record, encode_record
from state.store_base import StoreBase, push_serial

if TYPE_CHECKING:
    import psycopg

__all__ = ["HISTORY_COLUMNS", "PostgresRecords"]

_RESOURCE_COLUMNS = (
    "address, resource_type, schema_version, attributes, provider_ids, dependencies, tainted,"
    " checksum"
)
# A record written over the one at its address keeps nothing of it.
_OVERWRITE = (
    " ON CONFLICT (address) DO UPDATE SET resource_type = excluded.resource_type,"
    " schema_version = excluded.schema_version, attributes = excluded.attributes,"
    " provider_ids = excluded.provider_ids, dependencies = excluded.dependencies,"
    " tainted = excluded.tainted, checksum = excluded.checksum,"
    " updated_serial = excluded.updated_serial"
)
HISTORY_COLUMNS = 'time, "user", plan_hash, changes, outcome, serial'


class PostgresRecords(PostgresConnection, StoreBase):
    """The StateStore half of the PostgreSQL backend, but for the control-plane objects
    (state/sql_objects.py) and whole copies (state/postgres.py)."""

    def _check_lineage(self, conn: psycopg.Connection[Any], expected: str) -> None:
        row = conn.execute(f"SELECT lineage FROM {self._s}.meta FOR UPDATE").fetchone()
        if row is None or row[0] != expected:
            raise LineageMismatch.replaced(expected, row[0] if row else "(none)")

    def _bump(self, conn: psycopg.Connection[Any]) -> int:
        row = conn.execute(
            f"UPDATE {self._s}.meta SET serial = serial + 1 RETURNING serial"
        ).fetchone()
        assert row is not None
        return int(row[0])

    @contextmanager
    def _one_statement(self) -> Iterator[psycopg.Connection[Any]]:
        """For a change made by one statement: atomic by itself in autocommit, one round trip
        (an apply makes two per create: the intent and the record)."""
        if not self._exists:
            with self._writing():
                pass
        with self._statements() as conn:
            yield conn

    # -- records --------------------------------------------------------------------------

    def read_salvaged(self) -> StateSnapshot:
        if not self.exists():
            return StateSnapshot(self._fresh_state().lineage, 0)
        with self._txn() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            meta = conn.execute(f"SELECT lineage, serial FROM {self._s}.meta").fetchone()
            rows = conn.execute(
                f"SELECT {_RESOURCE_COLUMNS} FROM {self._s}.resources ORDER BY address"
            ).fetchall()
            intents = conn.execute(f"SELECT address, token, created FROM {self._s}.intents")
            intent_rows = intents.fetchall()
        assert meta is not None
        records: dict[str, ResourceRecord] = {}
        damaged: dict[str, str] = {}
        for row in rows:
            try:
                records[row[0]] = decode_record(StoredRecord(*row))
            except (ValueError, TypeError) as exc:
                damaged[row[0]] = str(exc)
        return StateSnapshot(
            meta[0], int(meta[1]), records, {r[0]: CreateIntent(*r) for r in intent_rows}, damaged
        )

    def _lineage_mismatch(self, expected: str) -> LineageMismatch:
        with self._txn() as conn:
            row = conn.execute(f"SELECT lineage FROM {self._s}.meta").fetchone()
        return LineageMismatch.replaced(expected, row[0] if row else "(none)")

    def write_resource(self, record: ResourceRecord, *, expected_lineage: str) -> int:
        row = astuple(encode_record(record))
        s = self._s
        with self._one_statement() as conn:
            found = conn.execute(
                f"""WITH bumped AS (
                    UPDATE {s}.meta SET serial = serial + 1 WHERE lineage = %s RETURNING serial),
                written AS (
                    INSERT INTO {s}.resources ({_RESOURCE_COLUMNS}, updated_serial)
                    SELECT %s, %s, %s, %s, %s, %s, %s, %s, serial FROM bumped
                    {_OVERWRITE} RETURNING 1),
                cleared AS (
                    DELETE FROM {s}.intents WHERE address = %s AND EXISTS (SELECT 1 FROM bumped))
                SELECT serial FROM bumped""",
                (expected_lineage, *row, record.address),
            ).fetchone()
        if found is None:
            raise self._lineage_mismatch(expected_lineage)
        return int(found[0])

    def delete_resource(self, address: str, *, expected_lineage: str) -> int:
        with self._writing() as conn:
            self._check_lineage(conn, expected_lineage)
            gone = conn.execute(f"DELETE FROM {self._s}.resources WHERE address = %s", (address,))
            if gone.rowcount == 0:
                raise ResourceNotFound(address)
            conn.execute(f"DELETE FROM {self._s}.intents WHERE address = %s", (address,))
            return self._bump(conn)

    def _replace_rows(
        self, conn: psycopg.Connection[Any], snapshot: StateSnapshot, serial: int
    ) -> None:
        rows = [astuple(encode_record(record)) for record in snapshot]
        conn.execute(f"DELETE FROM {self._s}.resources")
        with conn.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {self._s}.resources ({_RESOURCE_COLUMNS}, updated_serial)"
                f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s){_OVERWRITE}",
                [(*row, serial) for row in rows],
            )
        conn.execute(f"DELETE FROM {self._s}.intents")
        with conn.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {self._s}.intents (address, token, created) VALUES (%s, %s, %s)",
                [astuple(i) for i in snapshot.intents.values()],
            )

    def replace_all(self, snapshot: StateSnapshot, *, force: bool = False) -> int:
        for record in snapshot:
            encode_record(record)  # refuse before the transaction starts
        with self._writing() as conn:
            row = conn.execute(f"SELECT lineage, serial FROM {self._s}.meta FOR UPDATE").fetchone()
            assert row is not None
            serial = push_serial(snapshot, row[0], int(row[1]), force=force)
            conn.execute(
                f"UPDATE {self._s}.meta SET lineage = %s, serial = %s", (snapshot.lineage, serial)
            )
            self._replace_rows(conn, snapshot, serial)
        return serial

    # -- intents, history, salt -----------------------------------------------------------

    def record_intent(self, address: str, token: str) -> CreateIntent:
        intent = CreateIntent(address, token, utc_now())
        s = self._s
        with self._one_statement() as conn:
            row = conn.execute(
                f"""WITH made AS (
                    INSERT INTO {s}.intents (address, token, created) VALUES (%s, %s, %s)
                    ON CONFLICT (address) DO NOTHING RETURNING address, token, created)
                SELECT address, token, created FROM made UNION ALL
                SELECT address, token, created FROM {s}.intents
                WHERE address = %s AND NOT EXISTS (SELECT 1 FROM made)""",
                (*astuple(intent), address),
            ).fetchone()
        if row is None:  # the existing intent went between the insert and the select: retry
            return self.record_intent(address, token)
        return CreateIntent(*row)

    def clear_intent(self, address: str) -> None:
        if self.exists():
            with self._txn() as conn:
                conn.execute(f"DELETE FROM {self._s}.intents WHERE address = %s", (address,))

    def append_history(self, entry: HistoryEntry) -> None:
        with self._writing() as conn:
            conn.execute(
                f"INSERT INTO {self._s}.history ({HISTORY_COLUMNS})"
                " VALUES (%s, %s, %s, %s, %s, %s)",
                astuple(entry),
            )

    def history(self) -> list[HistoryEntry]:
        if not self.exists():
            return []
        with self._txn() as conn:
            rows = conn.execute(
                f"SELECT {HISTORY_COLUMNS} FROM {self._s}.history ORDER BY id"
            ).fetchall()
        return [HistoryEntry(r[0], r[1], r[2], int(r[3]), r[4], int(r[5])) for r in rows]

    def salt(self, lineage: str) -> str:
        if not self.exists():
            return self._salt_before_state(lineage)
        with self._txn() as conn:
            row = conn.execute(f"SELECT lineage, salt FROM {self._s}.meta").fetchone()
        assert row is not None
        if row[0] != lineage:
            raise LineageMismatch(lineage, row[0])
        return str(row[1])
