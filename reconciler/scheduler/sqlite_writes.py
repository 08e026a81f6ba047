"""The SQLite scheduler store's changes, set-wise: for each kind of change, one read of the rows
it may touch and one `executemany` of the guarded statements, not a statement (and a read) per
job. Runs inside the store's write transaction (`BEGIN IMMEDIATE`): nobody else writes between
the read and the writes, so the rows the read found are exactly those the guarded statements
change, and what a job's later item in the same call finds is what its earlier one left (as one
statement per item would). The history events a call makes are gathered in order and written
by `flush`, so their ids follow the order the changes were made in."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reconciler.scheduler.executor import Place
from reconciler.scheduler.model import Admit, Preempt, Status
from reconciler.scheduler.reasons import Reason, ReasonCode, reason
from reconciler.scheduler.store import Ended, Removal, Started, ending_event

HELD = "status IN ('admitted', 'running')"


@dataclass
class Writes:
    conn: sqlite3.Connection
    now: float
    events: list[tuple[int, float, str, str, str]] = field(default_factory=list)

    def event(self, job: int, status: str, why: Reason, message: str | None = None) -> None:
        """`message`: the reason's sentence, when the caller has rendered it already."""
        text = why.message if message is None else message
        self.events.append((job, self.now, status, why.code.value, text))

    def flush(self) -> None:
        if self.events:
            self.conn.executemany(
                "INSERT INTO events (job, time, status, code, message) VALUES (?, ?, ?, ?, ?)",
                self.events,
            )
        self.events = []

    def _rows(self, ids: Collection[int], columns: str, condition: str) -> list[Any]:
        """`columns` of the jobs among `ids` that meet `condition`, read in one statement."""
        if not ids:
            return []
        return self.conn.execute(
            f"SELECT {columns} FROM jobs WHERE id IN (SELECT value FROM json_each(?))"
            f" AND {condition}",
            (json.dumps(sorted(set(ids))),),
        ).fetchall()

    def move(self, moves: Mapping[int, str], serial: int) -> None:
        """Queued jobs whose route an apply moved wait for another pool now: theirs is set to
        it (what `jobs list --pool` and `jobs cancel --pool` go by), and the move is a history
        event; a job no longer queued, or already there, is left as it is."""
        if not moves:
            return
        was = dict(self._rows(list(moves), "id, pool", "status = 'queued'"))
        rows: list[tuple[str, int]] = []
        for job, pool in moves.items():
            old = was.get(job, pool)
            if old == pool:
                continue
            rows.append((pool, job))
            why = reason(ReasonCode.ROUTE_MOVED, was=old, pool=pool, serial=serial)
            self.event(job, Status.QUEUED.value, why)
        self.conn.executemany("UPDATE jobs SET pool = ? WHERE id = ? AND status = 'queued'", rows)

    def reprioritize(self, priorities: Mapping[int, int], serial: int) -> None:
        """Queued jobs an apply gave another priority (their policy's changed, or they moved
        to another policy) show the one the cycle orders them by, and the change is a history
        event; a job no longer queued, or already at it, is left as it is."""
        if not priorities:
            return
        was = dict(self._rows(list(priorities), "id, priority", "status = 'queued'"))
        rows: list[tuple[int, int]] = []
        for job, priority in priorities.items():
            old = was.get(job, priority)
            if old == priority:
                continue
            rows.append((priority, job))
            why = reason(ReasonCode.PRIORITY_CHANGED, was=old, priority=priority, serial=serial)
            self.event(job, Status.QUEUED.value, why)
        self.conn.executemany(
            "UPDATE jobs SET priority = ? WHERE id = ? AND status = 'queued'", rows
        )

    def admit(self, admits: Sequence[Admit], place: Place | None) -> list[int]:
        """Queued jobs admitted, with the capacity they hold and the place their attempts run;
        the ids admitted (a job's first admission in `admits` wins, as it leaves it queued no
        more)."""
        queued = {row[0] for row in self._rows([a.job for a in admits], "id", "status = 'queued'")}
        taken: list[Admit] = []
        for admit in admits:
            if admit.job in queued:
                queued.discard(admit.job)
                taken.append(admit)
        where = (
            (None, None, None) if place is None else (place.host, place.host_name, place.jobs_dir)
        )
        self.conn.executemany(
            "UPDATE jobs SET status = 'admitted', pool = ?, policy = ?, priority = ?,"
            " worker = ?, attempt = attempt + 1, pid = NULL, pid_start = NULL, admitted_at = ?,"
            " claim_until = NULL, reason_code = NULL, reason_message = NULL,"
            " reason_detail = NULL, place_host = ?, place_name = ?, place_dir = ?"
            " WHERE id = ? AND status = 'queued'",
            [(a.pool, a.policy, a.priority, a.worker, self.now, *where, a.job) for a in taken],
        )
        self.conn.executemany(
            "INSERT INTO allocations (job, pool, policy, key, amount) VALUES (?, ?, ?, ?, ?)",
            [(a.job, a.pool, a.policy, key, value) for a in taken for key, value in a.amounts],
        )
        for admit in taken:
            on = f" on worker {admit.worker}" if admit.worker else ""
            via = "" if admit.policy.endswith("/*") else f" via policy {admit.policy}"
            why = reason(ReasonCode.ADMITTED, pool=admit.pool, via=via, on=on)
            self.event(admit.job, Status.ADMITTED.value, why)
        return [admit.job for admit in taken]

    def preempt(self, preempts: Sequence[Preempt], grace: float) -> list[int]:
        """Stop requests with a deadline for held jobs not already stopping; the ids asked (a
        victim named twice is asked once, by the first preemptor that names it)."""
        victims = [victim for preempt in preempts for victim in preempt.victims]
        open_ = dict(self._rows(victims, "id, status", f"{HELD} AND stop IS NULL"))
        rows: list[tuple[Any, ...]] = []
        asked: list[int] = []
        for preempt in preempts:
            why = reason(ReasonCode.PREEMPTING, preemptor=preempt.preemptor, why=preempt.why)
            message, detail = why.message, why.detail_json()
            for victim in preempt.victims:
                status = open_.pop(victim, None)
                if status is None:
                    continue
                rows.append((self.now + grace, preempt.preemptor, why.code.value, message,
                             detail, victim))  # fmt: skip
                self.event(victim, status, why, message)
                asked.append(victim)
        self.conn.executemany(
            "UPDATE jobs SET stop = 'preempt', stop_deadline = ?, preempted_for = ?,"
            " reason_code = ?, reason_message = ?, reason_detail = ?"
            f" WHERE id = ? AND {HELD} AND stop IS NULL",
            rows,
        )
        return asked

    def workers_gone(self, removals: Sequence[Removal], grace: float) -> list[int]:
        """A SIGKILL deadline and the reason for held attempts not stopping yet; the ids
        changed."""
        open_ = {
            (job, attempt): status
            for job, attempt, status in self._rows(
                [r.job for r in removals],
                "id, attempt, status",
                f"{HELD} AND stop IS NULL AND stop_deadline IS NULL",
            )
        }
        rows: list[tuple[Any, ...]] = []
        changed: list[int] = []
        for removal in removals:
            status = open_.pop((removal.job, removal.attempt), None)
            if status is None:
                continue
            why = removal.reason
            message = why.message
            rows.append((self.now + grace, why.code.value, message, why.detail_json(),
                         removal.job, removal.attempt))  # fmt: skip
            self.event(removal.job, status, why, message)
            changed.append(removal.job)
        self.conn.executemany(
            "UPDATE jobs SET stop_deadline = ?, reason_code = ?, reason_message = ?,"
            " reason_detail = ? WHERE id = ? AND attempt = ?"
            f" AND {HELD} AND stop IS NULL AND stop_deadline IS NULL",
            rows,
        )
        return changed

    def claim(self, claims: Mapping[int, float]) -> None:
        self.conn.executemany(
            "UPDATE jobs SET claim_until = ? WHERE id = ? AND status = 'queued'",
            [(until, job) for job, until in claims.items()],
        )

    def end_queued(self, ends: Sequence[tuple[int, Reason]], status: Status) -> list[int]:
        """Queued jobs ended (rejected, cancelled) with their reasons; the ids ended (a job's
        first ending in `ends` wins)."""
        queued = {row[0] for row in self._rows([job for job, _ in ends], "id", "status = 'queued'")}
        rows: list[tuple[Any, ...]] = []
        ended: list[int] = []
        for job, why in ends:
            if job not in queued:
                continue
            queued.discard(job)
            message = why.message
            rows.append((status.value, why.code.value, message, why.detail_json(), self.now, job))
            self.event(job, status.value, why, message)
            ended.append(job)
        self.conn.executemany(
            "UPDATE jobs SET status = ?, reason_code = ?, reason_message = ?, reason_detail = ?,"
            " finished_at = ?, claim_until = NULL WHERE id = ? AND status = 'queued'",
            rows,
        )
        return ended

    def reasons(self, reasons: Mapping[int, Reason]) -> None:
        """Write the queued reasons given (those that changed); a new code is also a history
        event."""
        codes = dict(self._rows(list(reasons), "id, reason_code", "status = 'queued'"))
        rows: list[tuple[Any, ...]] = []
        for job, why in reasons.items():
            if job not in codes:
                continue
            message = why.message
            rows.append((why.code.value, message, why.detail_json(), job))
            if codes[job] != why.code.value:
                self.event(job, Status.QUEUED.value, why, message)
        self.conn.executemany(
            "UPDATE jobs SET reason_code = ?, reason_message = ?, reason_detail = ? WHERE id = ?",
            rows,
        )

    def start(self, starts: Sequence[Started]) -> None:
        """Each held job's current attempt runs as its pid (a later start of the same attempt
        replaces the pid, as it would one statement at a time)."""
        attempts = dict(self._rows([s.job for s in starts], "id, attempt", HELD))
        done = [start for start in starts if attempts.get(start.job) == start.attempt]
        self.conn.executemany(
            "UPDATE jobs SET status = 'running', pid = ?, pid_start = ?,"
            " started_at = COALESCE(started_at, ?) WHERE id = ? AND attempt = ?"
            f" AND {HELD}",
            [(s.pid, s.since, self.now, s.job, s.attempt) for s in done],
        )
        for start in done:
            code = ReasonCode.ADOPTED if start.adopted else ReasonCode.STARTED
            why = reason(code, pid=start.pid, attempt=start.attempt)
            self.event(start.job, Status.RUNNING.value, why)

    def end(self, endings: Sequence[Ended]) -> list[int]:
        """Held jobs' current attempts ended: capacity released, moved on; the ids changed (a
        job's first ending of its current attempt wins: it holds nothing after)."""
        attempts = dict(self._rows([e.job for e in endings], "id, attempt", HELD))
        rows: list[tuple[Any, ...]] = []
        changed: list[int] = []
        for item in endings:
            if attempts.get(item.job) != item.attempt:
                continue
            del attempts[item.job]
            ending, why = item.ending, item.ending.reason
            # Queued again: no end and no exit status of its own yet (the attempt's status is
            # in its history event), so a job running again never shows the last one's.
            again = ending.status is Status.QUEUED
            finished, code = (None, None) if again else (self.now, ending.exit_code)
            message = why.message
            rows.append((ending.status.value, why.code.value, message, why.detail_json(),
                         code, ending.retries_left, finished, ending.status.value,
                         item.job, item.attempt))  # fmt: skip
            self.event(item.job, ending.status.value, why, ending_event(item))
            changed.append(item.job)
        self.conn.executemany(
            "UPDATE jobs SET status = ?, reason_code = ?, reason_message = ?,"
            " reason_detail = ?, exit_code = ?, retries_left = ?, finished_at = ?,"
            " stop = NULL, stop_deadline = NULL, killed = 0, pid = NULL, pid_start = NULL,"
            " worker = CASE WHEN ? = 'queued' THEN NULL ELSE worker END"
            f" WHERE id = ? AND attempt = ? AND {HELD}",
            rows,
        )
        self.conn.executemany("DELETE FROM allocations WHERE job = ?", [(j,) for j in changed])
        return changed

    def ask_to_cancel(self, jobs: Sequence[int], grace: float) -> list[int]:
        """Held jobs not already being cancelled get a cancel request (a pending preemption
        becomes one, with the earlier deadline); one already being cancelled gets this
        request's deadline when it is sooner (a cancel with --grace 1h, then one with --grace
        0: the job is killed now, not in an hour); the ids asked."""
        if not jobs:
            return []
        deadline = self.now + grace
        still = f"{HELD} AND (stop IS NULL OR stop = 'preempt' OR stop_deadline > ?)"
        open_ = dict(
            self.conn.execute(
                "SELECT id, status FROM jobs WHERE id IN (SELECT value FROM json_each(?))"
                f" AND {still}",
                (json.dumps(sorted(set(jobs))), deadline),
            ).fetchall()
        )
        asked = reason(ReasonCode.CANCEL_REQUESTED)
        message = asked.message
        changed = [job for job in dict.fromkeys(jobs) if job in open_]
        self.conn.executemany(
            "UPDATE jobs SET stop = 'cancel', stop_deadline = MIN(COALESCE(stop_deadline,"
            " ?), ?), reason_code = ?, reason_message = ?, reason_detail = '{}'"
            f" WHERE id = ? AND {still}",
            [(deadline, deadline, asked.code.value, message, j, deadline) for j in changed],
        )
        for job in changed:
            self.event(job, open_[job], asked, message)
        return changed
