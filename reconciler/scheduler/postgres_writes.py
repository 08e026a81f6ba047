"""The PostgreSQL scheduler store's changes, set-wise: one statement per kind of change (unnest of
arrays, COPY), not one per job. Each guarded as on SQLite: a change to a job that is no longer
in the status it expects changes nothing, and RETURNING says which jobs it changed. Runs inside
the store's write transaction. What both stores' Writes share (which items count, the history
events, `flush`): reconciler.scheduler.sql_writes."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reconciler.scheduler.model import Admit, Status
from reconciler.scheduler.postgres_tables import EVENT_COLUMNS, columns
from reconciler.scheduler.sql_writes import Said, SqlWrites, Where, started_reason
from reconciler.scheduler.store import Ended, Removal, Started, ending_event

if TYPE_CHECKING:
    import psycopg

# The array type of each column `_set_queued` sets.
_ARRAY = {"pool": "text", "priority": "bigint"}


@dataclass
class Writes(SqlWrites):
    conn: psycopg.Connection[Any]
    s: str  # the quoted schema
    now: float
    events: list[tuple[int, float, str, str, str]] = field(default_factory=list)

    def copy(self, table: str, names: str, rows: Sequence[Sequence[Any]]) -> None:
        if not rows:
            return
        with (
            self.conn.cursor() as cursor,
            cursor.copy(f"COPY {self.s}.{table} ({names}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(row)

    def _insert_events(self, rows: Sequence[tuple[int, float, str, str, str]]) -> None:
        self.copy("sched_events", EVENT_COLUMNS, rows)

    def _ids(self, sql: str, args: Sequence[Any]) -> set[int]:
        return {int(row[0]) for row in self.conn.execute(sql, args).fetchall()}

    def _set_queued(self, column: str, values: Mapping[int, Any]) -> dict[int, Any]:
        rows = self.conn.execute(
            f"UPDATE {self.s}.sched_jobs j SET {column} = w.{column}"
            f" FROM (SELECT v.*, o.{column} AS old FROM unnest(%s::bigint[],"
            f" %s::{_ARRAY[column]}[]) AS v(job, {column}) JOIN {self.s}.sched_jobs o"
            f" ON o.id = v.job AND o.status = 'queued' AND o.{column} IS DISTINCT FROM"
            f" v.{column}) AS w WHERE j.id = w.job RETURNING j.id, w.old",
            (list(values), list(values.values())),
        ).fetchall()
        return {int(row[0]): row[1] for row in rows}

    def _admit(self, admits: Sequence[Admit], where: Where) -> set[int]:
        return self._ids(
            f"UPDATE {self.s}.sched_jobs j SET status = 'admitted', pool = v.pool,"
            " policy = v.policy, priority = v.priority, worker = v.worker,"
            " attempt = j.attempt + 1, pid = NULL, pid_start = NULL, admitted_at = %s,"
            " claim_until = NULL,"
            " reason_code = NULL, reason_message = NULL, reason_detail = NULL,"
            " place_host = %s, place_name = %s, place_dir = %s"
            " FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::bigint[], %s::text[])"
            " AS v(job, pool, policy, priority, worker)"
            " WHERE j.id = v.job AND j.status = 'queued' RETURNING j.id",
            (self.now, *where, *columns(admits, "job", "pool", "policy", "priority", "worker")),
        )

    def _allocate(self, rows: Sequence[tuple[int, str, str, str, int]]) -> None:
        self.copy("sched_allocations", "job, pool, policy, key, amount", rows)

    def _preempt(
        self, deadline: float, rows: Sequence[tuple[int, int, str, str, str]]
    ) -> dict[int, str]:
        return dict(
            self.conn.execute(
                f"UPDATE {self.s}.sched_jobs j SET stop = 'preempt', stop_deadline = %s,"
                " preempted_for = v.preemptor, reason_code = v.code, reason_message = v.message,"
                " reason_detail = v.detail FROM unnest(%s::bigint[], %s::bigint[], %s::text[],"
                " %s::text[], %s::text[]) AS v(job, preemptor, code, message, detail)"
                " WHERE j.id = v.job AND j.status IN ('admitted', 'running') AND j.stop IS NULL"
                " RETURNING j.id, j.status",
                (deadline, *_arrays(rows, 5)),
            ).fetchall()
        )

    def workers_gone(self, removals: Sequence[Removal], grace: float) -> list[int]:
        """A SIGKILL deadline and the reason for held attempts not stopping yet, in one
        statement; the ids changed."""
        by_job: dict[int, Removal] = {}
        for removal in removals:
            by_job.setdefault(removal.job, removal)
        if not by_job:
            return []
        rows = list(by_job.values())
        stopped = dict(
            self.conn.execute(
                f"UPDATE {self.s}.sched_jobs j SET stop_deadline = %s, reason_code = v.code,"
                " reason_message = v.message, reason_detail = v.detail FROM unnest(%s::bigint[],"
                " %s::bigint[], %s::text[], %s::text[], %s::text[])"
                " AS v(job, attempt, code, message, detail)"
                " WHERE j.id = v.job AND j.attempt = v.attempt"
                " AND j.status IN ('admitted', 'running') AND j.stop IS NULL"
                " AND j.stop_deadline IS NULL RETURNING j.id, j.status",
                (self.now + grace, [r.job for r in rows], [r.attempt for r in rows],
                 [r.reason.code.value for r in rows], [r.reason.message for r in rows],
                 [r.reason.detail_json() for r in rows]),
            ).fetchall()
        )  # fmt: skip
        changed = [job for job in by_job if job in stopped]
        for job in changed:
            self.event(job, stopped[job], by_job[job].reason)
        return changed

    def claim(self, claims: Mapping[int, float]) -> None:
        if claims:
            self.conn.execute(
                f"UPDATE {self.s}.sched_jobs j SET claim_until = v.until"
                " FROM unnest(%s::bigint[], %s::float8[]) AS v(job, until)"
                " WHERE j.id = v.job AND j.status = 'queued'",
                (list(claims), list(claims.values())),
            )

    def _end_queued(self, status: Status, ends: Sequence[Said]) -> set[int]:
        return self._ids(
            f"UPDATE {self.s}.sched_jobs j SET status = %s, reason_code = v.code,"
            " reason_message = v.message, reason_detail = v.detail, finished_at = %s,"
            " claim_until = NULL FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[])"
            " AS v(job, code, message, detail)"
            " WHERE j.id = v.job AND j.status = 'queued' RETURNING j.id",
            (status.value, self.now, *_arrays(ends, 4)),
        )

    def _set_reasons(self, rows: Sequence[Said]) -> set[int]:
        return {
            int(row[0])
            for row in self.conn.execute(
                f"UPDATE {self.s}.sched_jobs j SET reason_code = w.code,"
                " reason_message = w.message, reason_detail = w.detail"
                " FROM (SELECT v.*, o.reason_code AS old FROM unnest(%s::bigint[], %s::text[],"
                " %s::text[], %s::text[]) AS v(job, code, message, detail)"
                f" JOIN {self.s}.sched_jobs o ON o.id = v.job AND o.status = 'queued') AS w"
                " WHERE j.id = w.job RETURNING j.id, w.old IS DISTINCT FROM w.code",
                _arrays(rows, 4),
            ).fetchall()
            if row[1]
        }

    def start(self, batch: Sequence[Started]) -> None:
        """Distinct jobs' current attempts run as their pids."""
        done = self._ids(
            f"UPDATE {self.s}.sched_jobs j SET status = 'running', pid = v.pid,"
            " pid_start = v.since, started_at = COALESCE(j.started_at, %s)"
            " FROM unnest(%s::bigint[], %s::bigint[], %s::bigint[], %s::bigint[])"
            " AS v(job, attempt, pid, since) WHERE j.id = v.job AND j.attempt = v.attempt"
            " AND j.status IN ('admitted', 'running') RETURNING j.id",
            (self.now, *columns(batch, "job", "attempt", "pid", "since")),
        )
        for start in batch:
            if start.job in done:
                self.event(start.job, Status.RUNNING.value, started_reason(start))

    def end(self, batch: Sequence[Ended]) -> list[int]:
        """Distinct jobs' current attempts ended and moved on; the ids changed."""
        whys = [item.ending.reason for item in batch]
        done = self._ids(
            f"UPDATE {self.s}.sched_jobs j SET status = v.status, reason_code = v.code,"
            " reason_message = v.message, reason_detail = v.detail,"
            " exit_code = v.exit_code, retries_left = v.retries_left,"
            " finished_at = CASE WHEN v.status = 'queued' THEN NULL ELSE %s END,"
            " stop = NULL, stop_deadline = NULL, killed = FALSE, pid = NULL, pid_start = NULL,"
            " worker = CASE WHEN v.status = 'queued' THEN NULL ELSE j.worker END"
            " FROM unnest(%s::bigint[], %s::bigint[], %s::text[], %s::text[], %s::text[],"
            " %s::text[], %s::bigint[], %s::bigint[])"
            " AS v(job, attempt, status, code, message, detail, exit_code, retries_left)"
            " WHERE j.id = v.job AND j.attempt = v.attempt"
            " AND j.status IN ('admitted', 'running') RETURNING j.id",
            (self.now, [i.job for i in batch], [i.attempt for i in batch],
             [i.ending.status.value for i in batch], [w.code.value for w in whys],
             [w.message for w in whys], [w.detail_json() for w in whys],
             [None if i.ending.status is Status.QUEUED else i.ending.exit_code for i in batch],
             [i.ending.retries_left for i in batch]),
        )  # fmt: skip
        changed = [item.job for item in batch if item.job in done]
        for item in batch:
            if item.job in done:
                self.event(
                    item.job, item.ending.status.value, item.ending.reason, ending_event(item)
                )
        return changed

    def release(self, jobs: Collection[int]) -> None:
        if jobs:
            self.conn.execute(
                f"DELETE FROM {self.s}.sched_allocations WHERE job = ANY(%s)", (list(jobs),)
            )


def _arrays(rows: Sequence[tuple[Any, ...]], width: int) -> list[list[Any]]:
    """Rows of `width` values as one list per column: the arrays an unnest(...) takes."""
    return [[row[i] for row in rows] for i in range(width)]
