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
part of a message (reconciler.scheduler.postgres_failures). Its reads and a cycle's commit
are written once for it and the SQLite store (reconciler.scheduler.sql_store).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any

from reconciler.errors import PoolformError
from reconciler.scheduler.decoded_rows import DecodedRows
from reconciler.scheduler.job_rows import request_json
from reconciler.scheduler.model import Status
from reconciler.scheduler.postgres_failures import NoQueue, QueueForbidden, Scrubber, translated
from reconciler.scheduler.postgres_leading import PostgresLeading
from reconciler.scheduler.postgres_tables import (
    INSERT_COLUMNS,
    LAYOUT_VERSION,
    layout_version,
    rounds,
    upgrade,
)
from reconciler.scheduler.postgres_writes import Writes
from reconciler.scheduler.reasons import ReasonCode, reason
from reconciler.scheduler.store import Ended, JobRecord, NewJob, Started, StoreLost
from state.postgres import _advisory_key, describe_dsn
from state.postgres_connection import open_session
from state.postgres_schema import quoted_schema

if TYPE_CHECKING:
    import psycopg

LOCK_WAIT_S = 30.0  # as the SQLite store's busy timeout

__all__ = ["LAYOUT_VERSION", "NoQueue", "PostgresStore", "QueueForbidden"]


class PostgresStore(PostgresLeading):
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

        # To open another connection (`reopened`), never to open this one again.
        self._opening = (dsn, schema, connect_timeout)
        self._s = quoted_schema(schema)
        self._jobs, self._allocations = f"{self._s}.sched_jobs", f"{self._s}.sched_allocations"
        self._events, self._meta = f"{self._s}.sched_events", f"{self._s}.sched_meta"
        where, password = describe_dsn(dsn)
        self._scrub = Scrubber(dsn, password)
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
                f"cannot connect to the scheduler's store at {self.location}: "
                f"{self._scrub.error(error)}"
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
            conn = self._conn
            with translated(self.location, self._scrub, self._lock_wait), conn.transaction():
                if write:
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._write_key,))
                else:
                    conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                yield conn

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

    # -- what SqlStore asks of a store ---------------------------------------------------------

    _mark = "%s"

    def _reading(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        return self._txn(write=False)

    def _writing(self) -> AbstractContextManager[psycopg.Connection[Any]]:
        return self._txn()

    def _writes(self, conn: psycopg.Connection[Any], now: float) -> Writes:
        return Writes(conn, self._s, now)

    def _id_set(self, column: str) -> str:
        return f"{column} = ANY(%s)"

    def _id_arg(self, ids: Collection[int]) -> list[int]:
        return sorted(int(job) for job in ids)

    def _rows(
        self, conn: psycopg.Connection[Any], sql: str, args: Sequence[Any]
    ) -> Iterable[tuple[Any, ...]]:
        # Streamed (libpq's single-row mode): the client holds a row at a time, never
        # the whole result as `execute` does (nor a batch of rows that may each hold a
        # megabyte of `envs`, as a server-side cursor's fetches would).
        return conn.cursor().stream(sql, args)

    # -- leadership (reconciler.scheduler.leader; the lock itself: postgres_leading) ------------

    def reopened(self) -> PostgresStore:
        """The same queue through a new connection (this one lost: StoreLost). It holds
        nothing this one held: leading is won again through `try_lead`."""
        dsn, schema, timeout = self._opening
        return PostgresStore(dsn, schema=schema, connect_timeout=timeout, create=False)

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
            return self._select(conn, *self._among(ids))

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
            return self._select(conn, *self._among(changed)) if changed else []


if TYPE_CHECKING:
    from reconciler.scheduler.store import SchedulerStore

    def _conforms(store: PostgresStore) -> SchedulerStore:
        return store
