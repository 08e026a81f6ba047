"""The scheduler's store on PostgreSQL (psycopg 3): one queue for every machine that shares it.

Its tables (``sched_*``) live in the state's schema beside the state's own, versioned as the
``sched`` component of the schema's ``layout`` table: created and migrated by poolform, and a
layout newer than this poolform understands is refused. Every protocol call is one
transaction; writers take a transaction-level advisory lock first, so `jobs submit`, `jobs
cancel` and the scheduler loop queue one behind the other as they do on SQLite (`BEGIN
IMMEDIATE`) and a guarded update never races a change it did not see. Readers take a
repeatable-read snapshot. Rows are written set-wise (COPY, unnest): one round trip per kind of
change, not per job.

The connection is never re-opened: a scheduler that leads through this connection's session
(see reconciler.scheduler.leader) and loses it can write nothing more through it; it gives
up leading and competes again through a new store (`reopened`). The password is never
part of a message.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from reconciler.errors import PoolformError
from reconciler.scheduler.decoded_rows import DecodedRows
from reconciler.scheduler.executor import Place
from reconciler.scheduler.model import Decisions, Status
from reconciler.scheduler.postgres_tables import (
    EVENT_COLUMNS,
    INSERT_COLUMNS,
    LAYOUT_VERSION,
    layout_version,
    rounds,
    upgrade,
)
from reconciler.scheduler.postgres_writes import Writes
from reconciler.scheduler.reasons import Reason, ReasonCode, reason
from reconciler.scheduler.sqlite_rows import (
    COLUMNS,
    HELD_VALUES,
    STATUS,
    cycle_of,
    event_of,
    record_of,
    request_json,
)
from reconciler.scheduler.store import (
    Committed,
    Ended,
    Event,
    JobRecord,
    Listed,
    NewJob,
    Removal,
    Started,
    StoreLost,
    job_filter,
    listed,
)
from state.postgres import _advisory_key, describe_dsn
from state.postgres_connection import open_session
from state.postgres_schema import quoted_schema

if TYPE_CHECKING:
    import psycopg

_QUOTED = re.compile(r'"([^"]*)"')
LOCK_WAIT_S = 30.0  # as the SQLite store's busy timeout


def _unparsable(dsn: str) -> str:
    """The connection string when libpq cannot parse it (so its password is not known), else
    ""."""
    from psycopg.conninfo import conninfo_to_dict

    try:
        conninfo_to_dict(dsn)
    except Exception:  # any parse failure: psycopg raises its own error classes
        return dsn
    return ""


class NoQueue(PoolformError):
    """The schema holds no scheduler tables, and the store was opened not to create them."""


class QueueForbidden(PoolformError):
    """PostgreSQL refused these credentials a read or a write of the queue's tables; `said`:
    its words (`permission denied for table sched_jobs`)."""

    def __init__(self, message: str, *, hint: str, said: str) -> None:
        super().__init__(message, hint=hint)
        self.said = said


__all__ = ["LAYOUT_VERSION", "NoQueue", "PostgresStore", "QueueForbidden"]


class PostgresStore:
    """SchedulerStore over one PostgreSQL connection (shared by the threads of one process)."""

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "poolform",
        connect_timeout: int = 10,
        create: bool = True,  # False: NoQueue when the tables are not there yet, none made
        read_only: bool = False,  # True: tables of an earlier layout are refused, not upgraded
    ) -> None:
        import psycopg

        self._psycopg = psycopg
        # To open another connection (`reopened`), never to open this one again.
        self._opening = (dsn, schema, connect_timeout)
        self._s = quoted_schema(schema)
        where, self._password = describe_dsn(dsn)
        self._unparsable = _unparsable(dsn)
        self.location = f"{where} (schema {schema})"
        self._mutex = threading.RLock()
        self._decoded = DecodedRows()
        try:
            # A session that holds the write lock and never ends its transaction (a scheduler
            # stopped with Ctrl-Z mid-write, a psql session left open) must not hang every
            # job command on every machine: give up after as long as SQLite's busy timeout.
            self._conn: psycopg.Connection[Any] | None = open_session(
                dsn, connect_timeout=connect_timeout, lock_wait_s=LOCK_WAIT_S
            )
        except psycopg.Error as error:
            raise StoreLost(
                f"cannot connect to the scheduler's store at {self.location}: {self._scrub(error)}"
            ) from None
        name = f"poolform:{self._conn.info.dbname}:{schema}"
        self._create_key = _advisory_key(name) ^ 1  # the state backend's: one creator at a time
        self._write_key = _advisory_key(f"{name}:scheduler-writes")
        self.leader_key = _advisory_key(f"{name}:scheduler-leader")
        try:
            self._migrate(schema, create, read_only)
        except BaseException:
            self.close()
            raise

    # -- plumbing ------------------------------------------------------------------------------

    def _scrub(self, error: BaseException) -> str:
        text = " ".join(str(error).split())  # libpq's messages span lines
        text = text.replace(self._password, "***") if self._password else text
        if not self._unparsable:
            return text
        # libpq quotes the piece of a connection string it cannot parse, and one it cannot
        # parse has no password to replace: no quoted piece of it is shown.
        return _QUOTED.sub(
            lambda m: '"***"' if len(m[1]) > 1 and m[1] in self._unparsable else m[0], text
        )

    def _scrub_text(self, text: str) -> str:
        return text.replace(self._password, "***") if self._password else text

    def _lock_wait(self) -> str:
        with self._mutex:
            if self._conn is None:
                return "?"
            row = self._conn.execute("SELECT current_setting('lock_timeout')").fetchone()
            return str(row[0]) if row else "?"

    @contextmanager
    def _txn(self, *, write: bool = True) -> Iterator[psycopg.Connection[Any]]:
        with self._mutex:
            if self._conn is None:
                raise PoolformError(f"the scheduler's store at {self.location} is closed")
            try:
                with self._conn.transaction():
                    if write:
                        self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._write_key,))
                    else:
                        self._conn.execute(
                            "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY"
                        )
                    yield self._conn
            except self._psycopg.errors.LockNotAvailable:
                raise PoolformError(
                    f"the scheduler's store at {self.location} stayed locked by another session "
                    f"for longer than lock_timeout ({self._lock_wait()}); this command's change "
                    "was not made",
                    hint="a scheduler stopped mid-write (Ctrl-Z: resume it with fg, or end it) "
                    "or an open transaction on the sched_* tables (a psql session) holds it: "
                    "end it, then run the command again",
                ) from None
            except (self._psycopg.OperationalError, self._psycopg.InterfaceError) as error:
                raise StoreLost(
                    f"lost the connection to the scheduler's store at {self.location}: "
                    f"{self._scrub(error)}",
                    hint="run the command again once the server is back; a running scheduler "
                    "that lost its connection gives up leading, connects again and competes "
                    "for it anew",
                ) from None
            except self._psycopg.errors.InsufficientPrivilege as error:
                said = self._scrub_text(error.diag.message_primary or str(error).splitlines()[0])
                raise QueueForbidden(
                    f"scheduler's store at {self.location}: {said} (a permission these "
                    "credentials lack)",
                    hint="job commands read the queue's sched_* tables in the state's schema "
                    "(SELECT; submit and cancel also INSERT, UPDATE, DELETE and USAGE on its "
                    "sequences); a grant ON ALL TABLES IN SCHEMA covers only the tables there "
                    "when it is made",
                    said=said,
                ) from None
            except self._psycopg.Error as error:
                raise PoolformError(
                    f"scheduler's store at {self.location}: {self._scrub(error)}"
                ) from None

    def _migrate(self, schema: str, create: bool, read_only: bool) -> None:
        with self._txn(write=False) as conn:
            version = layout_version(conn, schema, self.location)
        if version == 0 and (read_only or not create):
            raise NoQueue(f"no scheduler tables at {self.location}")
        if version < LAYOUT_VERSION and read_only:
            # plan's look at the queue: an upgrade of the team's tables is for a job command
            raise PoolformError(
                f"the scheduler's tables at {self.location} have layout version {version}, "
                f"made by an earlier poolform; any job command upgrades them to "
                f"{LAYOUT_VERSION}"
            )
        if version < LAYOUT_VERSION:
            try:
                with self._txn() as conn:
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._create_key,))
                    upgrade(conn, schema, self.location)
            except QueueForbidden as refused:
                made = "made" if version == 0 else f"upgraded from layout version {version}"
                raise PoolformError(
                    f"the scheduler's tables at {self.location} are not {made} yet, and these "
                    f"credentials may not make them ({refused.said})",
                    hint="run one job command (`poolform jobs list`) with the credentials that "
                    "apply, which makes them; then grant readers SELECT on them",
                ) from None

    def close(self) -> None:
        with self._mutex:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- leadership (reconciler.scheduler.leader) -----------------------------------------------

    def reopened(self) -> PostgresStore:
        """The same queue through a new connection (this one lost: StoreLost). It holds
        nothing this one held: leading is won again through `try_lead`."""
        dsn, schema, timeout = self._opening
        return PostgresStore(dsn, schema=schema, connect_timeout=timeout, create=False)

    def try_lead(self) -> bool:
        """Take the session-level leader lock on this connection, and name the holder; False
        when another session holds it. Freed when this connection ends, however it ends."""
        with self._txn() as conn:
            got = conn.execute("SELECT pg_try_advisory_lock(%s)", (self.leader_key,)).fetchone()
            if not (got and got[0]):
                return False
            since = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            conn.execute(
                f"INSERT INTO {self._s}.sched_leader (id, pid, host, since, session) VALUES"
                " (1, %s, %s, %s, pg_backend_pid()) ON CONFLICT (id) DO UPDATE SET"
                " pid = excluded.pid, host = excluded.host, since = excluded.since,"
                " session = excluded.session",
                (os.getpid(), socket.gethostname(), since),
            )
        return True

    def leader(self) -> str | None:
        """Who leads, as a phrase ("pid 12 on host, since ..."); None when nobody does."""
        with self._txn(write=False) as conn:
            row = conn.execute(
                f"SELECT l.pid, l.host, l.since FROM {self._s}.sched_leader l JOIN pg_locks k"
                " ON k.pid = l.session AND k.locktype = 'advisory' AND k.granted"
                " AND k.classid = %s AND k.objid = %s AND k.objsubid = 1",
                ((self.leader_key >> 32) & 0xFFFFFFFF, self.leader_key & 0xFFFFFFFF),
            ).fetchone()
        return None if row is None else f"pid {row[0]} on {row[1]}, since {row[2]}"

    # -- reading -------------------------------------------------------------------------------

    def _select(
        self, conn: psycopg.Connection[Any], where: str, args: Sequence[Any], whole: bool = False
    ) -> list[JobRecord]:
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM {self._s}.sched_jobs {where} ORDER BY id", args
        ).fetchall()
        held: dict[int, list[tuple[str, int]]] = {}
        ids = [row[0] for row in rows if row[STATUS] in HELD_VALUES]
        if ids:
            for job, key, amount in conn.execute(
                f"SELECT job, key, amount FROM {self._s}.sched_allocations WHERE job = ANY(%s)",
                (ids,),
            ):
                held.setdefault(job, []).append((key, amount))
        return self._decoded.records(rows, held, whole=whole)

    def get(self, job_id: int) -> JobRecord | None:
        with self._txn(write=False) as conn:
            found = self._select(conn, "WHERE id = %s", (job_id,))
        return found[0] if found else None

    def jobs(
        self,
        *,
        pool: str | None = None,
        status: Status | None = None,
        active: bool = False,
        ids: Collection[int] | None = None,
    ) -> list[JobRecord]:
        some = None if ids is None else ("id = ANY(%s)", sorted(int(job) for job in ids))
        where, args = job_filter(pool, status, active, "%s", some)
        whole = active and pool is None and status is None and ids is None  # see DecodedRows
        with self._txn(write=False) as conn:
            return self._select(conn, where, args, whole)

    def listing(self, *, pool: str | None = None, status: Status | None = None) -> list[Listed]:
        where, args = job_filter(pool, status, False, "%s")
        shared: dict[str, str] = {}
        found: list[Listed] = []
        with self._txn(write=False) as conn:
            held: dict[int, list[tuple[str, int]]] = {}
            for job, key, amount in conn.execute(
                f"SELECT job, key, amount FROM {self._s}.sched_allocations"
                f" WHERE job IN (SELECT id FROM {self._s}.sched_jobs {where})",
                args,
            ):
                held.setdefault(job, []).append((key, amount))
            # Streamed (libpq's single-row mode): the client holds a row at a time, never
            # the whole result as `execute` does (nor a batch of rows that may each hold a
            # megabyte of `envs`, as a server-side cursor's fetches would).
            for row in conn.cursor().stream(
                f"SELECT {COLUMNS} FROM {self._s}.sched_jobs {where} ORDER BY id", args
            ):
                holds = held.get(row[0])
                amounts = tuple(sorted(holds)) if holds else ()
                found.append(listed(record_of(row, amounts), shared))
        return found

    def events(self, job_id: int) -> list[Event]:
        with self._txn(write=False) as conn:
            rows = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM {self._s}.sched_events WHERE job = %s ORDER BY id",
                (job_id,),
            ).fetchall()
        return [event_of(row) for row in rows]

    def last_cycle(self) -> int:
        with self._txn(write=False) as conn:
            row = conn.execute(
                f"SELECT value FROM {self._s}.sched_meta WHERE key = 'cycle'"
            ).fetchone()
        return cycle_of(row[0]) if row else 0

    # -- writing -------------------------------------------------------------------------------

    def submit(self, jobs: Sequence[NewJob], now: float) -> list[JobRecord]:
        if not jobs:
            return []
        with self._txn() as conn:
            # Under the write lock nobody else draws ids: a batch's ids are consecutive.
            ids = sorted(
                int(row[0])
                for row in conn.execute(
                    "SELECT nextval(%s::regclass) FROM generate_series(1, %s)",
                    (f"{self._s}.sched_job_ids", len(jobs)),
                )
            )
            batch = ids[0]
            rows: list[tuple[Any, ...]] = []
            writes = Writes(conn, self._s, now)
            for job_id, job in zip(ids, jobs, strict=True):
                why = job.reason or reason(ReasonCode.PENDING_EVALUATION)
                rows.append(
                    (job_id, batch, job.name, job.rank, job.num_jobs, request_json(job.request),
                     job.run, json.dumps(dict(job.envs)), job.retries, job.retries,
                     job.status.value, why.code.value, why.message, why.detail_json(), now,
                     job.pool, job.subject, job.priority, job.request.preemptible)
                )  # fmt: skip
                writes.event(job_id, Status.QUEUED.value, reason(ReasonCode.SUBMITTED))
                if job.status is not Status.QUEUED:
                    writes.event(job_id, job.status.value, why)
            writes.copy("sched_jobs", INSERT_COLUMNS, rows)
            writes.flush()
            return self._select(conn, "WHERE id = ANY(%s)", (ids,))

    def commit(
        self,
        decisions: Decisions,
        reasons: Mapping[int, Reason],
        now: float,
        grace: float,
        place: Place | None = None,
    ) -> Committed:
        with self._txn() as conn:
            writes = Writes(conn, self._s, now)
            # First: a moved job admitted this cycle has its move in its history before it.
            writes.move(decisions.moves, decisions.serial)
            writes.reprioritize(decisions.priorities, decisions.serial)
            admitted = writes.admit(decisions.admits, place)
            preempting = writes.preempt(decisions.preempts, grace)
            writes.claim(decisions.claims)
            writes.end_queued([(r.job, r.reason) for r in decisions.rejects], Status.REJECTED)
            writes.reasons(reasons)
            conn.execute(
                f"INSERT INTO {self._s}.sched_meta (key, value) VALUES ('cycle', %s)"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(decisions.cycle),),
            )
            writes.flush()
            wanted = admitted + preempting
            records = self._select(conn, "WHERE id = ANY(%s)", (wanted,)) if wanted else []
        by_id = {r.id: r for r in records}
        return Committed(tuple(by_id[i] for i in admitted), tuple(by_id[i] for i in preempting))

    def started(self, starts: Sequence[Started], now: float) -> None:
        if not starts:
            return
        with self._txn() as conn:
            writes = Writes(conn, self._s, now)
            for batch in rounds(starts):
                writes.start(batch)
            writes.flush()

    def killed(self, job_id: int, now: float) -> None:
        with self._txn() as conn:
            conn.execute(f"UPDATE {self._s}.sched_jobs SET killed = TRUE WHERE id = %s", (job_id,))

    def workers_gone(self, removals: Sequence[Removal], now: float, grace: float) -> list[int]:
        if not removals:
            return []
        with self._txn() as conn:
            writes = Writes(conn, self._s, now)
            changed = writes.workers_gone(removals, grace)
            writes.flush()
        return changed

    def ended(self, endings: Sequence[Ended], now: float) -> list[int]:
        if not endings:
            return []
        with self._txn() as conn:
            writes = Writes(conn, self._s, now)
            changed = [job for batch in rounds(endings) for job in writes.end(batch)]
            writes.release(changed)
            writes.flush()
        return changed

    def cancel(self, job_ids: Sequence[int], now: float, grace: float) -> list[JobRecord]:
        # A job already being cancelled is asked again only to bring its deadline sooner.
        asked = reason(ReasonCode.CANCEL_REQUESTED)
        wanted = list(dict.fromkeys(job_ids))
        with self._txn() as conn:
            writes = Writes(conn, self._s, now)
            cancelled = reason(ReasonCode.CANCELLED)
            ended = writes.end_queued([(job, cancelled) for job in wanted], Status.CANCELLED)
            done = set(ended)
            rest = [job for job in wanted if job not in done]
            stopping = dict(
                conn.execute(
                    f"UPDATE {self._s}.sched_jobs SET stop = 'cancel',"
                    " stop_deadline = LEAST(COALESCE(stop_deadline, %s), %s), reason_code = %s,"
                    " reason_message = %s, reason_detail = '{}' WHERE id = ANY(%s)"
                    " AND status IN ('admitted', 'running') AND (stop IS NULL OR stop = 'preempt'"
                    " OR stop_deadline > %s) RETURNING id, status",
                    (now + grace, now + grace, asked.code.value, asked.message, rest, now + grace),
                ).fetchall()
            )
            for job in rest:
                if job in stopping:
                    writes.event(job, stopping[job], asked)
            writes.flush()
            changed = ended + [job for job in rest if job in stopping]
            return self._select(conn, "WHERE id = ANY(%s)", (changed,)) if changed else []


if TYPE_CHECKING:
    from reconciler.scheduler.store import SchedulerStore

    def _conforms(store: PostgresStore) -> SchedulerStore:
        return store
