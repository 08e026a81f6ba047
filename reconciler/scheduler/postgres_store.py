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
(see reconciler.scheduler.leader) and loses it can write nothing more. The password is never
part of a message.
"""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from reconciler.errors import PoolformError
from reconciler.scheduler.model import Decisions, Status
from reconciler.scheduler.reasons import Reason, ReasonCode, reason
from reconciler.scheduler.sqlite_rows import COLUMNS, STATUSES, event_of, record_of, request_json
from reconciler.scheduler.store import Committed, Ended, Event, JobRecord, NewJob, Started
from state.postgres import _advisory_key, describe_dsn
from state.postgres_schema import quoted_schema

if TYPE_CHECKING:
    import psycopg

__all__ = ["LAYOUT_VERSION", "PostgresStore"]

LAYOUT_VERSION = 1
COMPONENT = "sched"
_EVENT_COLUMNS = "job, time, status, code, message"
_INSERT_COLUMNS = (
    "id, batch, name, rank, num_jobs, request, run, envs, retries, retries_left, status,"
    " reason_code, reason_message, reason_detail, submitted_at, pool, subject, priority,"
    " preemptible"
)


def _migrations(s: str) -> dict[int, list[str]]:
    """The statements that bring the tables from version N-1 to N."""
    return {
        1: [
            f"CREATE SEQUENCE IF NOT EXISTS {s}.sched_job_ids",
            f"CREATE TABLE IF NOT EXISTS {s}.sched_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            f"""CREATE TABLE IF NOT EXISTS {s}.sched_jobs (
                id BIGINT PRIMARY KEY, batch BIGINT NOT NULL, name TEXT NOT NULL,
                rank BIGINT NOT NULL, num_jobs BIGINT NOT NULL, request TEXT NOT NULL,
                run TEXT NOT NULL, envs TEXT NOT NULL, retries BIGINT NOT NULL,
                retries_left BIGINT NOT NULL, status TEXT NOT NULL CHECK (status IN ({STATUSES})),
                reason_code TEXT, reason_message TEXT, reason_detail TEXT,
                submitted_at DOUBLE PRECISION NOT NULL, admitted_at DOUBLE PRECISION,
                started_at DOUBLE PRECISION, finished_at DOUBLE PRECISION, pool TEXT, policy TEXT,
                subject TEXT, priority BIGINT, preemptible BOOLEAN NOT NULL, exit_code BIGINT,
                worker TEXT, worker_dir TEXT, attempt BIGINT NOT NULL DEFAULT 0, pid BIGINT,
                stop TEXT CHECK (stop IS NULL OR stop IN ('preempt', 'cancel')),
                stop_deadline DOUBLE PRECISION, killed BOOLEAN NOT NULL DEFAULT FALSE,
                preempted_for BIGINT, claim_until DOUBLE PRECISION)""",
            f"CREATE INDEX IF NOT EXISTS sched_jobs_status ON {s}.sched_jobs (status)",
            f"CREATE INDEX IF NOT EXISTS sched_jobs_pool ON {s}.sched_jobs (pool)",
            f"""CREATE TABLE IF NOT EXISTS {s}.sched_allocations (
                job BIGINT NOT NULL REFERENCES {s}.sched_jobs (id), pool TEXT NOT NULL,
                policy TEXT NOT NULL, key TEXT NOT NULL,
                amount BIGINT NOT NULL CHECK (amount >= 0), PRIMARY KEY (job, key))""",
            f"""CREATE TABLE IF NOT EXISTS {s}.sched_events (
                id BIGSERIAL PRIMARY KEY, job BIGINT NOT NULL, time DOUBLE PRECISION NOT NULL,
                status TEXT NOT NULL, code TEXT NOT NULL, message TEXT NOT NULL)""",
            f"CREATE INDEX IF NOT EXISTS sched_events_job ON {s}.sched_events (job, id)",
            f"""CREATE TABLE IF NOT EXISTS {s}.sched_leader (
                id INTEGER PRIMARY KEY CHECK (id = 1), pid BIGINT NOT NULL, host TEXT NOT NULL,
                since TEXT NOT NULL, session BIGINT NOT NULL)""",
        ]
    }


class PostgresStore:
    """SchedulerStore over one PostgreSQL connection (shared by the threads of one process)."""

    def __init__(self, dsn: str, *, schema: str = "poolform", connect_timeout: int = 10) -> None:
        import psycopg

        self._psycopg = psycopg
        self._s = quoted_schema(schema)
        where, self._password = describe_dsn(dsn)
        self.location = f"{where} (schema {schema})"
        self._mutex = threading.RLock()
        try:
            self._conn: psycopg.Connection[Any] | None = psycopg.connect(
                dsn, autocommit=True, connect_timeout=connect_timeout
            )
        except psycopg.Error as error:
            raise PoolformError(
                f"cannot connect to the scheduler's store at {self.location}: {self._scrub(error)}"
            ) from None
        name = f"poolform:{self._conn.info.dbname}:{schema}"
        self._create_key = _advisory_key(name) ^ 1  # the state backend's: one creator at a time
        self._write_key = _advisory_key(f"{name}:scheduler-writes")
        self.leader_key = _advisory_key(f"{name}:scheduler-leader")
        self._migrate(schema)

    # -- plumbing ------------------------------------------------------------------------------

    def _scrub(self, error: BaseException) -> str:
        text = " ".join(str(error).split())  # libpq's messages span lines
        return text.replace(self._password, "***") if self._password else text

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
            except (self._psycopg.OperationalError, self._psycopg.InterfaceError) as error:
                raise PoolformError(
                    f"lost the connection to the scheduler's store at {self.location}: "
                    f"{self._scrub(error)}",
                    hint="run the command again once the server is back; a scheduler that "
                    "lost its connection stops, and another one (or a restart) takes over",
                ) from None
            except self._psycopg.Error as error:
                raise PoolformError(
                    f"scheduler's store at {self.location}: {self._scrub(error)}"
                ) from None

    def _migrate(self, schema: str) -> None:
        s = self._s
        with self._txn(write=False) as conn:
            found = conn.execute(
                "SELECT 1 FROM information_schema.tables WHERE table_schema = %s"
                " AND table_name = 'layout'",
                (schema,),
            ).fetchone()
            version = 0
            if found:
                row = conn.execute(
                    f"SELECT version FROM {s}.layout WHERE component = %s", (COMPONENT,)
                ).fetchone()
                version = int(row[0]) if row else 0
        self._refuse_newer(version)
        if version == LAYOUT_VERSION:
            return
        with self._txn() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (self._create_key,))
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {s}.layout ("
                " component TEXT PRIMARY KEY, version INTEGER NOT NULL)"
            )
            row = conn.execute(
                f"SELECT version FROM {s}.layout WHERE component = %s FOR UPDATE", (COMPONENT,)
            ).fetchone()
            version = int(row[0]) if row else 0  # another process may have migrated meanwhile
            self._refuse_newer(version)
            for step in range(version + 1, LAYOUT_VERSION + 1):
                for statement in _migrations(s)[step]:
                    conn.execute(statement)
            conn.execute(
                f"INSERT INTO {s}.layout (component, version) VALUES (%s, %s) ON CONFLICT"
                " (component) DO UPDATE SET version = excluded.version",
                (COMPONENT, LAYOUT_VERSION),
            )

    def _refuse_newer(self, version: int) -> None:
        if version > LAYOUT_VERSION:
            raise PoolformError(
                f"the scheduler's tables at {self.location} have layout version {version}, "
                f"newer than this poolform understands ({LAYOUT_VERSION})",
                hint="upgrade poolform",
            )

    def close(self) -> None:
        with self._mutex:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _copy(
        self, conn: psycopg.Connection[Any], table: str, columns: str, rows: list[Any]
    ) -> None:
        if not rows:
            return
        with (
            conn.cursor() as cursor,
            cursor.copy(f"COPY {self._s}.{table} ({columns}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(row)

    def _events(self, conn: psycopg.Connection[Any], rows: list[tuple[Any, ...]]) -> None:
        self._copy(conn, "sched_events", _EVENT_COLUMNS, rows)

    # -- leadership (reconciler.scheduler.leader) -----------------------------------------------

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
        self, conn: psycopg.Connection[Any], where: str, args: Sequence[Any]
    ) -> list[JobRecord]:
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM {self._s}.sched_jobs {where} ORDER BY id", args
        ).fetchall()
        held: dict[int, list[tuple[str, int]]] = {}
        ids = [row[0] for row in rows if row[10] in (Status.ADMITTED, Status.RUNNING)]
        if ids:
            for job, key, amount in conn.execute(
                f"SELECT job, key, amount FROM {self._s}.sched_allocations WHERE job = ANY(%s)",
                (ids,),
            ):
                held.setdefault(job, []).append((key, amount))
        return [record_of(row, tuple(sorted(held.get(row[0], ())))) for row in rows]

    def get(self, job_id: int) -> JobRecord | None:
        with self._txn(write=False) as conn:
            found = self._select(conn, "WHERE id = %s", (job_id,))
        return found[0] if found else None

    def jobs(
        self, *, pool: str | None = None, status: Status | None = None, active: bool = False
    ) -> list[JobRecord]:
        clauses: list[str] = []
        args: list[Any] = []
        if pool is not None:
            clauses.append("pool = %s")
            args.append(pool)
        if status is not None:
            clauses.append("status = %s")
            args.append(status.value)
        if active:
            clauses.append("status IN ('queued', 'admitted', 'running')")
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        with self._txn(write=False) as conn:
            return self._select(conn, where, args)

    def events(self, job_id: int) -> list[Event]:
        with self._txn(write=False) as conn:
            rows = conn.execute(
                f"SELECT {_EVENT_COLUMNS} FROM {self._s}.sched_events WHERE job = %s ORDER BY id",
                (job_id,),
            ).fetchall()
        return [event_of(row) for row in rows]

    def last_cycle(self) -> int:
        with self._txn(write=False) as conn:
            row = conn.execute(
                f"SELECT value FROM {self._s}.sched_meta WHERE key = 'cycle'"
            ).fetchone()
        return int(row[0]) if row else 0

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
            events: list[tuple[Any, ...]] = []
            submitted = reason(ReasonCode.SUBMITTED)
            for job_id, job in zip(ids, jobs, strict=True):
                why = job.reason or reason(ReasonCode.PENDING_EVALUATION)
                rows.append(
                    (job_id, batch, job.name, job.rank, job.num_jobs, request_json(job.request),
                     job.run, json.dumps(dict(job.envs)), job.retries, job.retries,
                     job.status.value, why.code.value, why.message, why.detail_json(), now,
                     job.pool, job.subject, job.priority, job.request.preemptible)
                )  # fmt: skip
                events.append((job_id, now, Status.QUEUED.value, submitted.code.value,
                               submitted.message))  # fmt: skip
                if job.status is not Status.QUEUED:
                    events.append((job_id, now, job.status.value, why.code.value, why.message))
            self._copy(conn, "sched_jobs", _INSERT_COLUMNS, rows)
            self._events(conn, events)
            return self._select(conn, "WHERE id = ANY(%s)", (ids,))

    def commit(
        self, decisions: Decisions, reasons: Mapping[int, Reason], now: float, grace: float
    ) -> Committed:
        s = self._s
        events: list[tuple[Any, ...]] = []
        with self._txn() as conn:
            admits = {admit.job: admit for admit in decisions.admits}
            done = {
                int(row[0])
                for row in conn.execute(
                    f"UPDATE {s}.sched_jobs j SET status = 'admitted', pool = v.pool,"
                    " policy = v.policy, priority = v.priority, worker = v.worker,"
                    " attempt = j.attempt + 1, pid = NULL, admitted_at = %s, claim_until = NULL,"
                    " reason_code = NULL, reason_message = NULL, reason_detail = NULL"
                    " FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::bigint[], %s::text[])"
                    " AS v(job, pool, policy, priority, worker)"
                    " WHERE j.id = v.job AND j.status = 'queued' RETURNING j.id",
                    (
                        now,
                        *_columns(admits.values(), "job", "pool", "policy", "priority", "worker"),
                    ),
                )
            }
            admitted = [job for job in admits if job in done]
            allocations = [
                (job, admits[job].pool, admits[job].policy, key, value)
                for job in admitted
                for key, value in admits[job].amounts
            ]
            self._copy(conn, "sched_allocations", "job, pool, policy, key, amount", allocations)
            for job in admitted:
                admit = admits[job]
                on = f" on worker {admit.worker}" if admit.worker else ""
                via = "" if admit.policy.endswith("/*") else f" via policy {admit.policy}"
                why = reason(ReasonCode.ADMITTED, pool=admit.pool, via=via, on=on)
                events.append((job, now, Status.ADMITTED.value, why.code.value, why.message))
            preempting = self._preempt(conn, decisions, now, grace, events)
            if decisions.claims:
                conn.execute(
                    f"UPDATE {s}.sched_jobs j SET claim_until = v.until"
                    " FROM unnest(%s::bigint[], %s::float8[]) AS v(job, until)"
                    " WHERE j.id = v.job AND j.status = 'queued'",
                    (list(decisions.claims), list(decisions.claims.values())),
                )
            ends = {reject.job: reject.reason for reject in decisions.rejects}
            self._end_queued(conn, ends, Status.REJECTED, now, events)
            self._reasons(conn, reasons, now, events)
            conn.execute(
                f"INSERT INTO {s}.sched_meta (key, value) VALUES ('cycle', %s) ON CONFLICT (key)"
                " DO UPDATE SET value = excluded.value",
                (str(decisions.cycle),),
            )
            self._events(conn, events)
            wanted = admitted + preempting
            records = self._select(conn, "WHERE id = ANY(%s)", (wanted,)) if wanted else []
        by_id = {r.id: r for r in records}
        return Committed(tuple(by_id[i] for i in admitted), tuple(by_id[i] for i in preempting))

    def _preempt(
        self,
        conn: psycopg.Connection[Any],
        decisions: Decisions,
        now: float,
        grace: float,
        events: list[tuple[Any, ...]],
    ) -> list[int]:
        preempting: list[int] = []
        for preempt in decisions.preempts:
            why = reason(ReasonCode.PREEMPTING, preemptor=preempt.preemptor, why=preempt.why)
            stopped = dict(
                conn.execute(
                    f"UPDATE {self._s}.sched_jobs SET stop = 'preempt', stop_deadline = %s,"
                    " preempted_for = %s, reason_code = %s, reason_message = %s,"
                    " reason_detail = %s WHERE id = ANY(%s) AND status IN ('admitted', 'running')"
                    " AND stop IS NULL RETURNING id, status",
                    (now + grace, preempt.preemptor, why.code.value, why.message,
                     why.detail_json(), list(preempt.victims)),
                ).fetchall()
            )  # fmt: skip
            for victim in dict.fromkeys(preempt.victims):
                if victim in stopped:
                    events.append((victim, now, stopped[victim], why.code.value, why.message))
                    preempting.append(victim)
        return preempting

    def _end_queued(
        self,
        conn: psycopg.Connection[Any],
        ends: Mapping[int, Reason],
        status: Status,
        now: float,
        events: list[tuple[Any, ...]],
    ) -> list[int]:
        if not ends:
            return []
        whys = list(ends.values())
        ended = {
            int(row[0])
            for row in conn.execute(
                f"UPDATE {self._s}.sched_jobs j SET status = %s, reason_code = v.code,"
                " reason_message = v.message, reason_detail = v.detail, finished_at = %s,"
                " claim_until = NULL"
                " FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[])"
                " AS v(job, code, message, detail)"
                " WHERE j.id = v.job AND j.status = 'queued' RETURNING j.id",
                (status.value, now, list(ends), [w.code.value for w in whys],
                 [w.message for w in whys], [w.detail_json() for w in whys]),
            )
        }  # fmt: skip
        changed = [job for job in ends if job in ended]
        for job in changed:
            events.append((job, now, status.value, ends[job].code.value, ends[job].message))
        return changed

    def _reasons(
        self,
        conn: psycopg.Connection[Any],
        reasons: Mapping[int, Reason],
        now: float,
        events: list[tuple[Any, ...]],
    ) -> None:
        """Write the queued reasons that changed; a new code is also a history event."""
        if not reasons:
            return
        whys = list(reasons.values())
        new_code = {
            int(row[0])
            for row in conn.execute(
                f"UPDATE {self._s}.sched_jobs j SET reason_code = w.code,"
                " reason_message = w.message, reason_detail = w.detail"
                " FROM (SELECT v.*, o.reason_code AS old FROM unnest(%s::bigint[], %s::text[],"
                " %s::text[], %s::text[]) AS v(job, code, message, detail)"
                f" JOIN {self._s}.sched_jobs o ON o.id = v.job AND o.status = 'queued') AS w"
                " WHERE j.id = w.job RETURNING j.id, w.old IS DISTINCT FROM w.code",
                (list(reasons), [w.code.value for w in whys], [w.message for w in whys],
                 [w.detail_json() for w in whys]),
            ).fetchall()
            if row[1]
        }  # fmt: skip
        for job, why in reasons.items():
            if job in new_code:
                events.append((job, now, Status.QUEUED.value, why.code.value, why.message))

    def started(self, starts: Sequence[Started], now: float) -> None:
        if not starts:
            return
        with self._txn() as conn:
            events: list[tuple[Any, ...]] = []
            for batch in _rounds(starts):
                done = {
                    int(row[0])
                    for row in conn.execute(
                        f"UPDATE {self._s}.sched_jobs j SET status = 'running', pid = v.pid,"
                        " started_at = COALESCE(j.started_at, %s) FROM unnest(%s::bigint[],"
                        " %s::bigint[], %s::bigint[]) AS v(job, attempt, pid)"
                        " WHERE j.id = v.job AND j.attempt = v.attempt"
                        " AND j.status IN ('admitted', 'running') RETURNING j.id",
                        (now, *_columns(batch, "job", "attempt", "pid")),
                    )
                }
                for start in batch:
                    if start.job in done:
                        code = ReasonCode.ADOPTED if start.adopted else ReasonCode.STARTED
                        why = reason(code, pid=start.pid, attempt=start.attempt)
                        events.append((start.job, now, Status.RUNNING.value, why.code.value,
                                       why.message))  # fmt: skip
            self._events(conn, events)

    def killed(self, job_id: int, now: float) -> None:
        with self._txn() as conn:
            conn.execute(f"UPDATE {self._s}.sched_jobs SET killed = TRUE WHERE id = %s", (job_id,))

    def ended(self, endings: Sequence[Ended], now: float) -> list[int]:
        changed: list[int] = []
        if not endings:
            return changed
        with self._txn() as conn:
            events: list[tuple[Any, ...]] = []
            for batch in _rounds(endings):
                done = self._end(conn, batch, now)
                for item in batch:
                    if item.job in done:
                        why = item.ending.reason
                        events.append((item.job, now, item.ending.status.value, why.code.value,
                                       why.message))  # fmt: skip
                        changed.append(item.job)
            if changed:
                conn.execute(
                    f"DELETE FROM {self._s}.sched_allocations WHERE job = ANY(%s)", (changed,)
                )
            self._events(conn, events)
        return changed

    def _end(self, conn: psycopg.Connection[Any], batch: list[Ended], now: float) -> set[int]:
        whys = [item.ending.reason for item in batch]
        return {
            int(row[0])
            for row in conn.execute(
                f"UPDATE {self._s}.sched_jobs j SET status = v.status, reason_code = v.code,"
                " reason_message = v.message, reason_detail = v.detail,"
                " exit_code = v.exit_code, retries_left = v.retries_left,"
                " finished_at = CASE WHEN v.status = 'queued' THEN NULL ELSE %s END,"
                " stop = NULL, stop_deadline = NULL, killed = FALSE, pid = NULL,"
                " worker = CASE WHEN v.status = 'queued' THEN NULL ELSE j.worker END"
                " FROM unnest(%s::bigint[], %s::bigint[], %s::text[], %s::text[], %s::text[],"
                " %s::text[], %s::bigint[], %s::bigint[])"
                " AS v(job, attempt, status, code, message, detail, exit_code, retries_left)"
                " WHERE j.id = v.job AND j.attempt = v.attempt"
                " AND j.status IN ('admitted', 'running') RETURNING j.id",
                (now, [i.job for i in batch], [i.attempt for i in batch],
                 [i.ending.status.value for i in batch], [w.code.value for w in whys],
                 [w.message for w in whys], [w.detail_json() for w in whys],
                 [i.ending.exit_code for i in batch], [i.ending.retries_left for i in batch]),
            )
        }  # fmt: skip

    def cancel(self, job_ids: Sequence[int], now: float, grace: float) -> list[JobRecord]:
        why = reason(ReasonCode.CANCELLED)
        asked = reason(ReasonCode.CANCEL_REQUESTED)
        events: list[tuple[Any, ...]] = []
        wanted = list(dict.fromkeys(job_ids))
        with self._txn() as conn:
            ended = self._end_queued(
                conn, dict.fromkeys(wanted, why), Status.CANCELLED, now, events
            )
            rest = [job for job in wanted if job not in set(ended)]
            stopping = {
                int(row[0]): row[1]
                for row in conn.execute(
                    f"UPDATE {self._s}.sched_jobs SET stop = 'cancel',"
                    " stop_deadline = LEAST(COALESCE(stop_deadline, %s), %s), reason_code = %s,"
                    " reason_message = %s, reason_detail = '{}' WHERE id = ANY(%s)"
                    " AND status IN ('admitted', 'running') AND (stop IS NULL OR stop = 'preempt')"
                    " RETURNING id, status",
                    (now + grace, now + grace, asked.code.value, asked.message, rest),
                ).fetchall()
            }
            for job in rest:
                if job in stopping:
                    events.append((job, now, stopping[job], asked.code.value, asked.message))
            self._events(conn, events)
            changed = ended + [job for job in rest if job in stopping]
            return self._select(conn, "WHERE id = ANY(%s)", (changed,)) if changed else []


T = TypeVar("T", Started, Ended)


def _rounds(items: Sequence[T]) -> list[list[T]]:
    """Items in rounds of distinct jobs, in order: a job's second item goes in the second round,
    so one statement per round gives what one statement per item would (as on SQLite)."""
    rounds: list[list[T]] = []
    seen: dict[int, int] = {}
    for item in items:
        index = seen.get(item.job, 0)
        seen[item.job] = index + 1
        if index == len(rounds):
            rounds.append([])
        rounds[index].append(item)
    return rounds


def _columns(items: Any, *names: str) -> list[list[Any]]:
    """Items' attributes as one list per attribute: the arrays an unnest(...) takes."""
    rows = list(items)
    return [[getattr(item, name) for item in rows] for name in names]


if TYPE_CHECKING:
    from reconciler.scheduler.store import SchedulerStore

    def _conforms(store: PostgresStore) -> SchedulerStore:
        return store
