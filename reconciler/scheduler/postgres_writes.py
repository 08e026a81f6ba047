"""The PostgreSQL scheduler store's changes, set-wise: one statement per kind of change (unnest of
arrays, COPY), not one per job. Each guarded as on SQLite: a change to a job that is no longer
in the status it expects changes nothing. Runs inside the store's write transaction."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reconciler.scheduler.executor import Place
from reconciler.scheduler.model import Admit, Preempt, Status
from reconciler.scheduler.postgres_tables import EVENT_COLUMNS, columns
from reconciler.scheduler.reasons import Reason, ReasonCode, reason
from reconciler.scheduler.store import Ended, Removal, Started, ending_event

if TYPE_CHECKING:
    import psycopg


@dataclass
class Writes:
    """One write transaction's statements; the history events they make are gathered in order
    and written by `flush`."""

    conn: psycopg.Connection[Any]
    s: str  # the quoted schema
    now: float
    events: list[tuple[Any, ...]] = field(default_factory=list)

    def copy(self, table: str, names: str, rows: Sequence[Sequence[Any]]) -> None:
        if not rows:
            return
        with (
            self.conn.cursor() as cursor,
            cursor.copy(f"COPY {self.s}.{table} ({names}) FROM STDIN") as copy,
        ):
            for row in rows:
                copy.write_row(row)

    def event(self, job: int, status: str, why: Reason, message: str | None = None) -> None:
        """`message`: the reason's sentence, when the caller has rendered it already."""
        text = why.message if message is None else message
        self.events.append((job, self.now, status, why.code.value, text))

    def flush(self) -> None:
        self.copy("sched_events", EVENT_COLUMNS, self.events)
        self.events = []

    def _ids(self, sql: str, args: Sequence[Any]) -> set[int]:
        return {int(row[0]) for row in self.conn.execute(sql, args).fetchall()}

    def move(self, moves: Mapping[int, str], serial: int) -> None:
        """Queued jobs whose route an apply moved wait for another pool now: theirs is set to
        it (what `jobs list --pool` and `jobs cancel --pool` go by), and the move is a history
        event; a job no longer queued, or already there, is left as it is."""
        if not moves:
            return
        rows = self.conn.execute(
            f"UPDATE {self.s}.sched_jobs j SET pool = w.pool"
            " FROM (SELECT v.*, o.pool AS old FROM unnest(%s::bigint[], %s::text[])"
            f" AS v(job, pool) JOIN {self.s}.sched_jobs o ON o.id = v.job"
            " AND o.status = 'queued' AND o.pool IS DISTINCT FROM v.pool) AS w"
            " WHERE j.id = w.job RETURNING j.id, w.old",
            (list(moves), list(moves.values())),
        ).fetchall()
        was = {int(row[0]): row[1] for row in rows}
        for job, pool in moves.items():  # in the decisions' order, as the other events are
            if job in was:
                why = reason(ReasonCode.ROUTE_MOVED, was=was[job], pool=pool, serial=serial)
                self.event(job, Status.QUEUED.value, why)

    def reprioritize(self, priorities: Mapping[int, int], serial: int) -> None:
        """Queued jobs an apply gave another priority (their policy's changed, or they moved
        to another policy) show the one the cycle orders them by, and the change is a history
        event; a job no longer queued, or already at it, is left as it is."""
        if not priorities:
            return
        rows = self.conn.execute(
            f"UPDATE {self.s}.sched_jobs j SET priority = w.priority"
            " FROM (SELECT v.*, o.priority AS old FROM unnest(%s::bigint[], %s::bigint[])"
            f" AS v(job, priority) JOIN {self.s}.sched_jobs o ON o.id = v.job"
            " AND o.status = 'queued' AND o.priority IS DISTINCT FROM v.priority) AS w"
            " WHERE j.id = w.job RETURNING j.id, w.old",
            (list(priorities), list(priorities.values())),
        ).fetchall()
        was = {int(row[0]): row[1] for row in rows}
        for job, priority in priorities.items():  # in the decisions' order
            if job in was:
                why = reason(
                    ReasonCode.PRIORITY_CHANGED, was=was[job], priority=priority, serial=serial
                )
                self.event(job, Status.QUEUED.value, why)

    def admit(self, admits: Sequence[Admit], place: Place | None) -> list[int]:
        """Queued jobs admitted, with the capacity they hold and the place their attempts
        run; the ids admitted."""
        by_job: dict[int, Admit] = {}
        for admit in admits:
            by_job.setdefault(admit.job, admit)  # the first wins, as one statement each would
        where = (
            (None, None, None) if place is None else (place.host, place.host_name, place.jobs_dir)
        )
        done = self._ids(
            f"UPDATE {self.s}.sched_jobs j SET status = 'admitted', pool = v.pool,"
            " policy = v.policy, priority = v.priority, worker = v.worker,"
            " attempt = j.attempt + 1, pid = NULL, pid_start = NULL, admitted_at = %s,"
            " claim_until = NULL,"
            " reason_code = NULL, reason_message = NULL, reason_detail = NULL,"
            " place_host = %s, place_name = %s, place_dir = %s"
            " FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::bigint[], %s::text[])"
            " AS v(job, pool, policy, priority, worker)"
            " WHERE j.id = v.job AND j.status = 'queued' RETURNING j.id",
            (self.now, *where,
             *columns(by_job.values(), "job", "pool", "policy", "priority", "worker")),
        )  # fmt: skip
        admitted = [job for job in by_job if job in done]
        self.copy(
            "sched_allocations",
            "job, pool, policy, key, amount",
            [
                (job, by_job[job].pool, by_job[job].policy, key, value)
                for job in admitted
                for key, value in by_job[job].amounts
            ],
        )
        for job in admitted:
            admit = by_job[job]
            on = f" on worker {admit.worker}" if admit.worker else ""
            via = "" if admit.policy.endswith("/*") else f" via policy {admit.policy}"
            self.event(
                job,
                Status.ADMITTED.value,
                reason(ReasonCode.ADMITTED, pool=admit.pool, via=via, on=on),
            )
        return admitted

    def preempt(self, preempts: Sequence[Preempt], grace: float) -> list[int]:
        """Stop requests with a deadline for held jobs not already stopping, in one statement;
        the ids asked (a victim named twice is asked once, by the first preemptor naming it,
        as one statement per preemptor would have it)."""
        asks: dict[int, tuple[int, Reason, str, str]] = {}
        for preempt in preempts:
            why = reason(ReasonCode.PREEMPTING, preemptor=preempt.preemptor, why=preempt.why)
            ask = (preempt.preemptor, why, why.message, why.detail_json())
            for victim in preempt.victims:
                asks.setdefault(victim, ask)
        if not asks:
            return []
        rows = list(asks.values())
        stopped = dict(
            self.conn.execute(
                f"UPDATE {self.s}.sched_jobs j SET stop = 'preempt', stop_deadline = %s,"
                " preempted_for = v.preemptor, reason_code = v.code, reason_message = v.message,"
                " reason_detail = v.detail FROM unnest(%s::bigint[], %s::bigint[], %s::text[],"
                " %s::text[], %s::text[]) AS v(job, preemptor, code, message, detail)"
                " WHERE j.id = v.job AND j.status IN ('admitted', 'running') AND j.stop IS NULL"
                " RETURNING j.id, j.status",
                (self.now + grace, list(asks), [r[0] for r in rows],
                 [r[1].code.value for r in rows], [r[2] for r in rows], [r[3] for r in rows]),
            ).fetchall()
        )  # fmt: skip
        preempting = [victim for victim in asks if victim in stopped]
        for victim in preempting:
            _, why, message, _ = asks[victim]
            self.event(victim, stopped[victim], why, message)
        return preempting

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

    def end_queued(self, endings: Sequence[tuple[int, Reason]], status: Status) -> list[int]:
        """Queued jobs ended (rejected, cancelled) with their reasons; the ids ended (a job's
        first ending wins, as one statement each would have it)."""
        if not endings:
            return []
        ends: dict[int, Reason] = {}
        for job, why in endings:
            ends.setdefault(job, why)
        whys = list(ends.values())
        ended = self._ids(
            f"UPDATE {self.s}.sched_jobs j SET status = %s, reason_code = v.code,"
            " reason_message = v.message, reason_detail = v.detail, finished_at = %s,"
            " claim_until = NULL FROM unnest(%s::bigint[], %s::text[], %s::text[], %s::text[])"
            " AS v(job, code, message, detail)"
            " WHERE j.id = v.job AND j.status = 'queued' RETURNING j.id",
            (status.value, self.now, list(ends), [w.code.value for w in whys],
             [w.message for w in whys], [w.detail_json() for w in whys]),
        )  # fmt: skip
        changed = [job for job in ends if job in ended]
        for job in changed:
            self.event(job, status.value, ends[job])
        return changed

    def reasons(self, reasons: Mapping[int, Reason]) -> None:
        """Write the queued reasons that changed; a new code is also a history event."""
        if not reasons:
            return
        whys = list(reasons.values())
        messages = [w.message for w in whys]  # rendered once, for the row and the event
        new_code = {
            int(row[0])
            for row in self.conn.execute(
                f"UPDATE {self.s}.sched_jobs j SET reason_code = w.code,"
                " reason_message = w.message, reason_detail = w.detail"
                " FROM (SELECT v.*, o.reason_code AS old FROM unnest(%s::bigint[], %s::text[],"
                " %s::text[], %s::text[]) AS v(job, code, message, detail)"
                f" JOIN {self.s}.sched_jobs o ON o.id = v.job AND o.status = 'queued') AS w"
                " WHERE j.id = w.job RETURNING j.id, w.old IS DISTINCT FROM w.code",
                (list(reasons), [w.code.value for w in whys], messages,
                 [w.detail_json() for w in whys]),
            ).fetchall()
            if row[1]
        }  # fmt: skip
        for (job, why), message in zip(reasons.items(), messages, strict=True):
            if job in new_code:
                self.event(job, Status.QUEUED.value, why, message)

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
                code = ReasonCode.ADOPTED if start.adopted else ReasonCode.STARTED
                self.event(start.job, Status.RUNNING.value,
                           reason(code, pid=start.pid, attempt=start.attempt))  # fmt: skip

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
