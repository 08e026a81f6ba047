"""The PostgreSQL state backend (psycopg 3): one schema per state, every change one transaction.

The backend is put together from its parts: the connection and its errors in words
(``state.postgres_connection``), the records, intents, history and salt
(``state.postgres_records``), the advisory lock (``state.postgres_lock``) and the control-plane
objects (``state.sql_objects``). Here: whether a state is in the schema, making one, and whole
copies (``state migrate``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import astuple
from typing import TYPE_CHECKING, Any

from state.errors import StateDamaged, StateMoved
from state.fresh import FreshState
from state.locking import Clock, Sleep, utc_now
from state.model import ControlObject, HistoryEntry, LockInfo, StateSnapshot
from state.postgres_connection import advisory_key, describe_dsn
from state.postgres_lock import PostgresLock
from state.postgres_records import HISTORY_COLUMNS, PostgresRecords
from state.postgres_schema import STATE_TABLES, check_layout, create_statements, layout_query
from state.sql_objects import SqlObjectTable

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresBackend", "describe_dsn"]

# The scheduler's queue (reconciler/scheduler/postgres_store.py) keys its locks as the state does.
_advisory_key = advisory_key

# The tables of a schema, whatever privileges the role has on them (pg_class is readable by
# every role; information_schema.tables shows only tables the role may use).
_TABLE_QUERY = (
    "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n"
    " ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f')"
)


class PostgresBackend(PostgresRecords, PostgresLock, SqlObjectTable):
    """StateStore and Locker over one PostgreSQL connection, shared by the threads of an apply."""

    _mark = "%s"

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "poolform",
        directory: str = "",
        clock: Clock = time.monotonic,
        sleep: Sleep = time.sleep,
        connect_timeout: int = 10,
    ) -> None:
        self.directory = directory
        self.clock, self.sleep = clock, sleep
        self.held: LockInfo | None = None
        self._fresh: FreshState | None = None
        super().__init__(dsn, schema=schema, connect_timeout=connect_timeout)
        self._exists = self._inspect()

    # -- whether a state is there, and making one ---------------------------------------

    def _inspect(self) -> bool:
        """Whether a state exists in the schema (damage and newer layouts refused)."""
        with self._txn() as conn:
            # One snapshot for every statement: another runner's first apply may commit the
            # state's tables between two of them (its tables would then read as no layout).
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            # pg_catalog, not information_schema: information_schema lists only the tables
            # the role has a privilege on, so a role not granted the schema would read an
            # existing state as none (`show`: "No state."; plan: everything to create).
            query = _TABLE_QUERY + " AND c.relname = 'layout'"
            found = conn.execute(query, (self.schema,)).fetchone()
            row = None if found is None else conn.execute(layout_query(self.schema)).fetchone()
            if row is None:  # no state yet (or the scheduler's tables alone)
                self._refuse_foreign_tables(conn)
                return False
            check_layout(row[0], self._where)
            meta = conn.execute(f"SELECT lineage, serial, moved_to FROM {self._s}.meta").fetchall()
        if len(meta) != 1:
            raise StateDamaged(
                f"the state at {self._where} is damaged: its meta row (lineage and serial) is "
                "missing; restore it from a backup"
            )
        if meta[0][2]:
            raise StateMoved(self._where, meta[0][2])
        return True

    def _refuse_foreign_tables(self, conn: psycopg.Connection[Any]) -> None:
        """A schema with no state in it may hold tables of its own, but none by the names
        poolform's state uses: another program's `meta` or `resources` would be read as a
        state, or written into, half-way through an apply (a raw SQL error, after the cloud
        had changed). Refused before anything is read or made."""
        taken = [
            str(row[0])
            for row in conn.execute(
                _TABLE_QUERY + " AND c.relname = ANY(%s) ORDER BY c.relname",
                (self.schema, list(STATE_TABLES)),
            ).fetchall()
        ]
        if taken:
            raise StateDamaged(
                f"the PostgreSQL state at {self._where} is no poolform state: the schema holds "
                f"table(s) {', '.join(taken)} but no layout row for a state; tables of "
                "another program, or a state whose layout table was lost; poolform reads and "
                "writes neither. Give the state a schema of its own (the Cluster's `state.key`)"
            )

    def _create(self, conn: psycopg.Connection[Any]) -> None:
        """Make the tables and the meta row (inside the caller's transaction)."""
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._key ^ 1,))
        if (
            conn.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = %s"
                " AND table_name = 'meta'",
                (self.schema,),
            ).fetchone()
            and conn.execute(f"SELECT 1 FROM {self._s}.meta").fetchone()
        ):
            self._exists = True  # another process made it first: its lineage wins
            return
        for statement in create_statements(self.schema):
            conn.execute(statement)
        fresh = self._fresh_state()
        conn.execute(
            f"INSERT INTO {self._s}.layout (component, version) VALUES ('state', 1)"
            " ON CONFLICT (component) DO NOTHING"
        )
        conn.execute(
            f"INSERT INTO {self._s}.meta (id, lineage, serial, created, salt) VALUES"
            " (1, %s, 0, %s, %s)",
            (fresh.lineage, utc_now(), fresh.salt),
        )
        if self.held is not None:
            self._name_holder(conn, self.held)
        self._exists = True
        self._created()

    @contextmanager
    def _writing(self) -> Iterator[psycopg.Connection[Any]]:
        with self._txn() as conn:
            if not self._exists:
                self._create(conn)
            yield conn

    def exists(self) -> bool:
        if not self._exists:
            self._exists = self._inspect()  # made by another process since
        return self._exists

    # -- whole copies (state migrate) -----------------------------------------------------

    def adopt(
        self,
        snapshot: StateSnapshot,
        *,
        salt: str,
        history: Sequence[HistoryEntry],
        objects: Sequence[ControlObject],
    ) -> None:
        if self.exists():
            raise self._exists_already()
        self._fresh = FreshState(snapshot.lineage, salt)
        with self._writing() as conn:
            self._check_lineage(conn, snapshot.lineage)
            conn.execute(f"UPDATE {self._s}.meta SET serial = %s", (snapshot.serial,))
            self._replace_rows(conn, snapshot, snapshot.serial)
            with conn.cursor() as cursor:
                cursor.executemany(
                    f"INSERT INTO {self._s}.history ({HISTORY_COLUMNS})"
                    " VALUES (%s, %s, %s, %s, %s, %s)",
                    [astuple(entry) for entry in history],
                )
            for obj in objects:
                self._insert_object(conn, obj)

    def mark_moved(self, destination: str) -> None:
        with self._writing() as conn:
            conn.execute(f"UPDATE {self._s}.meta SET moved_to = %s", (destination,))

    # -- control-plane objects (state/sql_objects.py) -------------------------------------

    def _objects_table(self) -> str:
        return f"{self._s}.objects"

    def _objects_read(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        return self._txn()

    def _objects_write(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        return self._writing()


if TYPE_CHECKING:
    from state.protocol import StateBackend

    def _conforms(backend: PostgresBackend) -> StateBackend:
        return backend
