"""The PostgreSQL state backend (psycopg 3): one schema per state, every change one transaction.

The lock is a session-level advisory lock on the backend's connection plus a row naming the
holder: a holder killed by SIGKILL drops its connection, PostgreSQL ends its session and the
lock is free at once; the next holder finds the dead holder's row and says it took over.
Writes go through the same connection, so a holder that lost its connection (and with it the
lock) cannot write anything more. The password is never part of a message: locations are shown
as ``postgresql://user@host:port/db`` and errors are scrubbed of it.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import astuple, replace
from typing import TYPE_CHECKING, Any

from state.errors import (
    DamagedRecords,
    LineageMismatch,
    LockLost,
    LockMismatch,
    ResourceNotFound,
    SerialConflict,
    StateDamaged,
    StateError,
    StateForbidden,
    StateLocked,
    StateMoved,
    StateUnavailable,
)
from state.fresh import FreshState, created, fresh_salt, fresh_state_for
from state.locking import Clock, Sleep, new_lock_info, utc_now, wait_for_lock
from state.model import (
    ControlObject,
    CreateIntent,
    HistoryEntry,
    LockInfo,
    ResourceRecord,
    StateSnapshot,
)
from state.postgres_schema import (
    STATE_TABLES,
    check_layout,
    create_statements,
    layout_query,
    quoted_schema,
)
from state.records import (
    MAX_SERIAL,
    StoredRecord,
    decode_record,
    encode_record,
)
from state.sql_objects import SqlObjectTable

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresBackend", "describe_dsn"]

_RESOURCE_COLUMNS = (
    "address, resource_type, schema_version, attributes, provider_ids, dependencies, tainted,"
    " checksum"
)
_LOCK_COLUMNS = "lock_id, operation, who, pid, host, created, path, info"
# The tables of a schema, whatever privileges the role has on them (pg_class is readable by
# every role; information_schema.tables shows only tables the role may use).
_TABLE_QUERY = (
    "SELECT c.relname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n"
    " ON n.oid = c.relnamespace WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f')"
)


UNPARSABLE = "postgresql://(unparsable connection string)"
# What a role needs, told with every permission PostgreSQL refuses.
PG_NEEDS = (
    "reading the state takes USAGE on its schema and SELECT on its tables; changing it, "
    "INSERT, UPDATE and DELETE on them too, and making it, CREATE on the database"
)
# How long a statement waits for a table another session holds (a psql transaction left open,
# a poolform stopped with Ctrl-Z mid-write) before giving up: SQLite's busy timeout, and the
# scheduler queue's (reconciler/scheduler/postgres_store.py). Without it every runner would
# wait forever, holding the state lock.
LOCK_WAIT_S = 30


def describe_dsn(dsn: str) -> tuple[str, str]:
    """(a location without the password, the password or "") of a libpq connection string."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        parts = conninfo_to_dict(dsn)
    except Exception:  # an unparsable DSN: show nothing of it
        return UNPARSABLE, ""
    user = f"{parts['user']}@" if parts.get("user") else ""
    host = parts.get("host") or "(libpq default host)"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname') or ''}", str(
        parts.get("password") or ""
    )


def _advisory_key(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big", signed=True)


class PostgresBackend(SqlObjectTable):
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
        import psycopg

        self._psycopg = psycopg
        self.schema = schema
        self._s = quoted_schema(schema)
        where, self._password = describe_dsn(dsn)
        self._where = f"{where} (schema {schema})"
        if where == UNPARSABLE:  # libpq's own message would quote the piece holding a password
            raise StateUnavailable(
                f"cannot connect to the PostgreSQL state at {self._where}: the connection "
                "string does not parse (not shown: it may hold a password)"
            )
        self.directory = directory
        self.clock, self.sleep = clock, sleep
        self._mutex = threading.RLock()
        self.held: LockInfo | None = None
        self._fresh: FreshState | None = None
        try:
            self._conn: psycopg.Connection[Any] | None = psycopg.connect(
                dsn, autocommit=True, connect_timeout=connect_timeout
            )
            # Unless the session came with a lock_timeout of its own (PGOPTIONS).
            self._conn.execute(
                "SELECT set_config('lock_timeout', %s, false)"
                " WHERE current_setting('lock_timeout') = '0'",
                (f"{LOCK_WAIT_S}s",),
            )
        except psycopg.Error as exc:
            raise StateUnavailable(
                f"cannot connect to the PostgreSQL state at {self._where}: {self._scrub(exc)}"
            ) from None
        self._key = _advisory_key(f"poolform:{self._conn.info.dbname}:{schema}")
        self._exists = self._inspect()

    # -- plumbing -------------------------------------------------------------------------

    @property
    def location(self) -> str:
        return self._where

    @property
    def frees_dead_holder(self) -> bool:
        return True

    def _scrub(self, error: BaseException) -> str:
        return self._scrub_text(str(error).strip())

    def _scrub_text(self, text: str) -> str:
        return text.replace(self._password, "***") if self._password else text

    def _translate(self, exc: BaseException) -> StateError:
        if isinstance(exc, self._psycopg.errors.LockNotAvailable):
            return StateError(
                f"the PostgreSQL state at {self._where} stayed locked by another session for "
                f"longer than lock_timeout ({self._lock_wait()}); the statement that waited was "
                "cancelled, so nothing it would have written is recorded. An "
                "open transaction on the state's tables (a psql session) or a poolform stopped "
                "with Ctrl-Z mid-write holds it: end it, then run the command again (an apply "
                "finds what it made by its intent tokens)"
            )
        if isinstance(exc, self._psycopg.errors.InsufficientPrivilege):
            said = exc.diag.message_primary or str(exc).splitlines()[0]  # not the SQL quoted
            return StateForbidden(
                f"PostgreSQL state at {self._where}: {self._scrub_text(said)}", PG_NEEDS
            )
        if isinstance(exc, self._psycopg.OperationalError | self._psycopg.InterfaceError):
            return StateUnavailable(
                f"lost the connection to the PostgreSQL state at {self._where}: "
                f"{self._scrub(exc)}; the change in flight may not be recorded. Run the command "
                "again once the server is back: an apply finds what it made by its intent tokens"
            )
        return StateError(f"PostgreSQL state at {self._where}: {self._scrub(exc)}")

    def _lock_wait(self) -> str:
        try:
            row = (
                None
                if self._conn is None
                else self._conn.execute("SELECT current_setting('lock_timeout')").fetchone()
            )
        except self._psycopg.Error:
            row = None
        return str(row[0]) if row else "?"

    @contextmanager
    def _txn(self) -> Iterator[psycopg.Connection[Any]]:
        with self._mutex:
            if self._conn is None:
                raise StateError(f"the PostgreSQL state at {self._where} is closed")
            try:
                with self._conn.transaction():
                    yield self._conn
            except self._psycopg.Error as exc:
                raise self._translate(exc) from None

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

    def _fresh_state(self) -> FreshState:
        if self._fresh is None:
            self._fresh = fresh_state_for(self._where)
        return self._fresh

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
        created(self._where)

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

    def close(self) -> None:
        with self._mutex:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _check_lineage(self, conn: psycopg.Connection[Any], expected: str) -> None:
        row = conn.execute(f"SELECT lineage FROM {self._s}.meta FOR UPDATE").fetchone()
        if row is None or row[0] != expected:
            raise LineageMismatch(expected, row[0] if row else "(none)", hint="plan again")

    def _bump(self, conn: psycopg.Connection[Any]) -> int:
        row = conn.execute(
            f"UPDATE {self._s}.meta SET serial = serial + 1 RETURNING serial"
        ).fetchone()
        assert row is not None
        return int(row[0])

    # -- records --------------------------------------------------------------------------

    def read(self) -> StateSnapshot:
        snapshot = self.read_salvaged()
        if snapshot.damaged:
            raise DamagedRecords(dict(snapshot.damaged), self._where)
        return snapshot

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

    def _upsert(
        self, conn: psycopg.Connection[Any], rows: list[tuple[Any, ...]], serial: int
    ) -> None:
        with conn.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO {self._s}.resources ({_RESOURCE_COLUMNS}, updated_serial)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (address) DO UPDATE SET"
                " resource_type = excluded.resource_type,"
                " schema_version = excluded.schema_version, attributes = excluded.attributes,"
                " provider_ids = excluded.provider_ids, dependencies = excluded.dependencies,"
                " tainted = excluded.tainted, checksum = excluded.checksum,"
                " updated_serial = excluded.updated_serial",
                [(*row, serial) for row in rows],
            )

    @contextmanager
    def _one_statement(self) -> Iterator[psycopg.Connection[Any]]:
        """For a change made by one statement: atomic by itself in autocommit, one round trip
        (an apply makes two per create: the intent and the record)."""
        if not self._exists:
            with self._writing():
                pass
        with self._mutex:
            if self._conn is None:
                raise StateError(f"the PostgreSQL state at {self._where} is closed")
            try:
                yield self._conn
            except self._psycopg.Error as exc:
                raise self._translate(exc) from None

    def _lineage_mismatch(self, expected: str) -> LineageMismatch:
        with self._txn() as conn:
            row = conn.execute(f"SELECT lineage FROM {self._s}.meta").fetchone()
        return LineageMismatch(expected, row[0] if row else "(none)", hint="plan again")

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
                    ON CONFLICT (address) DO UPDATE SET resource_type = excluded.resource_type,
                    schema_version = excluded.schema_version, attributes = excluded.attributes,
                    provider_ids = excluded.provider_ids, dependencies = excluded.dependencies,
                    tainted = excluded.tainted, checksum = excluded.checksum,
                    updated_serial = excluded.updated_serial RETURNING 1),
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
        self._upsert(conn, rows, serial)
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
            lineage, stored = row[0], int(row[1])
            if snapshot.lineage != lineage and not force:
                raise LineageMismatch(snapshot.lineage, lineage, hint="refusing to push; force it")
            if snapshot.serial < stored and not force:
                raise SerialConflict(snapshot.serial, stored)
            serial = max(stored, snapshot.serial) + 1
            if serial > MAX_SERIAL:
                raise StateError(f"the serial would pass {MAX_SERIAL}; refusing to push")
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
                f'INSERT INTO {self._s}.history (time, "user", plan_hash, changes, outcome, serial)'
                " VALUES (%s, %s, %s, %s, %s, %s)",
                astuple(entry),
            )

    def history(self) -> list[HistoryEntry]:
        if not self.exists():
            return []
        with self._txn() as conn:
            rows = conn.execute(
                f'SELECT time, "user", plan_hash, changes, outcome, serial FROM {self._s}.history'
                " ORDER BY id"
            ).fetchall()
        return [HistoryEntry(r[0], r[1], r[2], int(r[3]), r[4], int(r[5])) for r in rows]

    def salt(self, lineage: str) -> str:
        if not self.exists():
            fresh = self._fresh_state()
            known = fresh.salt if lineage == fresh.lineage else fresh_salt(lineage)
            if known is None:
                raise LineageMismatch(lineage, fresh.lineage, hint="there is no state yet")
            return known
        with self._txn() as conn:
            row = conn.execute(f"SELECT lineage, salt FROM {self._s}.meta").fetchone()
        assert row is not None
        if row[0] != lineage:
            raise LineageMismatch(lineage, row[0])
        return str(row[1])

    def adopt(
        self,
        snapshot: StateSnapshot,
        *,
        salt: str,
        history: Sequence[HistoryEntry],
        objects: Sequence[ControlObject],
    ) -> None:
        if self.exists():
            raise StateError(f"a state exists at {self._where} already; refusing to overwrite it")
        self._fresh = FreshState(snapshot.lineage, salt)
        with self._writing() as conn:
            self._check_lineage(conn, snapshot.lineage)
            conn.execute(f"UPDATE {self._s}.meta SET serial = %s", (snapshot.serial,))
            self._replace_rows(conn, snapshot, snapshot.serial)
            with conn.cursor() as cursor:
                cursor.executemany(
                    f'INSERT INTO {self._s}.history (time, "user", plan_hash, changes, outcome,'
                    " serial) VALUES (%s, %s, %s, %s, %s, %s)",
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

    # -- the lock -------------------------------------------------------------------------

    def _name_holder(self, conn: psycopg.Connection[Any], info: LockInfo | None) -> LockInfo | None:
        """Replace the row naming the holder; the row it replaced (a dead holder's), if any."""
        row = conn.execute(f"SELECT {_LOCK_COLUMNS} FROM {self._s}.lock").fetchone()
        conn.execute(f"DELETE FROM {self._s}.lock")
        if info is not None:
            conn.execute(
                f"INSERT INTO {self._s}.lock (id, {_LOCK_COLUMNS})"
                " VALUES (1, %s, %s, %s, %s, %s, %s, %s, %s)",
                astuple(info)[:8],
            )
        return None if row is None else LockInfo(*row)

    def _holder(self) -> LockInfo:
        pid = self._lock_pid()
        row = None
        if self.exists():
            with self._txn() as conn:
                row = conn.execute(f"SELECT {_LOCK_COLUMNS} FROM {self._s}.lock").fetchone()
        if row is not None:
            return LockInfo(*row)
        return LockInfo("unknown", "unknown", f"PostgreSQL session {pid}", 0, "", "just now")

    def _lock_pid(self) -> int | None:
        with self._txn() as conn:
            row = conn.execute(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
                " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                " AND classid = %s AND objid = %s AND objsubid = 1",
                ((self._key >> 32) & 0xFFFFFFFF, self._key & 0xFFFFFFFF),
            ).fetchone()
        return None if row is None else int(row[0])

    def lock(self, operation: str, *, timeout: float = 0, who: str | None = None) -> LockInfo:
        if self.held is not None:
            raise StateError(f"the state lock of {self._where} is already held by this process")
        info = new_lock_info(operation, who=who, path=self._where)
        return wait_for_lock(lambda: self._try(info), timeout, clock=self.clock, sleep=self.sleep)

    def _try(self, info: LockInfo) -> LockInfo:
        with self._txn() as conn:
            got = conn.execute("SELECT pg_try_advisory_lock(%s)", (self._key,)).fetchone()
        if not (got and got[0]):
            raise StateLocked(self._holder(), directory=self.directory)
        self.held = info
        try:
            previous = None
            if self.exists():
                with self._txn() as conn:
                    previous = self._name_holder(conn, info)
        except BaseException:
            self.unlock(info.lock_id)
            raise
        if previous is not None:
            notice = (
                f"Took over the state lock of {previous.operation!r} by {previous.who} (pid "
                f"{previous.pid} on {previous.host}, since {previous.created}): its PostgreSQL "
                "session ended without releasing it."
            )
            info = replace(info, notice=notice)
        return info

    def unlock(self, lock_id: str) -> None:
        if self.held is None:
            return
        if self.held.lock_id != lock_id:
            raise LockMismatch(
                f"the state lock is held under ID {self.held.lock_id}, not {lock_id}"
            )
        try:
            if self._exists:
                with self._txn() as conn:
                    conn.execute(f"DELETE FROM {self._s}.lock WHERE lock_id = %s", (lock_id,))
            with self._txn() as conn:
                conn.execute("SELECT pg_advisory_unlock(%s)", (self._key,))
        finally:
            self.held = None

    def current_lock(self) -> LockInfo | None:
        if self.held is not None:
            return self.held
        return None if self._lock_pid() is None else self._holder()

    def confirm_held(self) -> None:
        """The advisory lock is the session's: held while this connection's session lives (a
        `force-unlock` ends it). A session that ended fails the query, so it is said as lost."""
        if self.held is None:
            return
        try:
            held = self._lock_pid_is_mine()
        except StateError:  # the session is gone, and its lock with it
            held = False
        if not held:
            raise LockLost(
                f"this process lost the state lock of {self._where}: its PostgreSQL session "
                "ended (a `force-unlock`, a server restart or a cut connection); nothing more "
                "is changed. Run the command again"
            )

    def _lock_pid_is_mine(self) -> bool:
        with self._txn() as conn:
            row = conn.execute(
                "SELECT pg_backend_pid() = ANY(ARRAY(SELECT pid FROM pg_locks"
                " WHERE locktype = 'advisory' AND granted"
                " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                " AND classid = %s AND objid = %s AND objsubid = 1))",
                ((self._key >> 32) & 0xFFFFFFFF, self._key & 0xFFFFFFFF),
            ).fetchone()
        return bool(row and row[0])

    def force_unlock(self, lock_id: str) -> None:
        if self.held is not None:
            self.unlock(lock_id)
            return
        holder = self.current_lock()
        if holder is None or holder.lock_id != lock_id:
            named = f"held under ID {holder.lock_id}" if holder else "not locked"
            raise LockMismatch(f"the state lock is {named}, not {lock_id}; nothing was unlocked")
        pid = self._lock_pid()
        with self._txn() as conn:
            if pid is not None:  # a session that holds on (a hung runner): end it
                conn.execute("SELECT pg_terminate_backend(%s)", (pid,))
            conn.execute(f"DELETE FROM {self._s}.lock WHERE lock_id = %s", (lock_id,))


if TYPE_CHECKING:
    from state.protocol import StateBackend

    def _conforms(backend: PostgresBackend) -> StateBackend:
        return backend
