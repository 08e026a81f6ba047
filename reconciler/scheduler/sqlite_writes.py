"""The SQLite scheduler store's changes, set-wise: for each kind of change, one read of the rows
it may touch and one `executemany` of the guarded statements, not a statement (and a read) per
job. Runs inside the store's write transaction (`BEGIN IMMEDIATE`): nobody else writes between
the read and the writes, so the rows the read found are exactly those the guarded statements
change, and what a job's later item in the same call finds is what its earlier one left (as one
statement per item would). What both stores' Writes share (which items count, the history
events, `flush`): reconciler.scheduler.sql_writes."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from reconciler.scheduler.model import Admit, Status
from reconciler.scheduler.reasons import ReasonCode, reason
from reconciler.scheduler.sql_writes import Said, SqlWrites, Where, started_reason
from reconciler.scheduler.store import Ended, Removal, Started, ending_event

HELD = "status IN ('admitted', 'running')"


@dataclass
class Writes(SqlWrites):
    conn: sqlite3.Connection
    now: float
    events: list[tuple[int, float, str, str, str]] = field(default_factory=list)

    def _insert_events(self, rows: Sequence[tuple[int, float, str, str, str]]) -> None:
        self.conn.executemany(
            "INSERT INTO events (job, time, status, code, message) VALUES (?, ?, ?, ?, ?)", rows
        )

    def _rows(self, ids: Collection[int], columns: str, condition: str) -> list[Any]:
        """`columns` of the jobs among `ids` that meet `condition`, read in one statement."""
        if not ids:
            return []
        return self.conn.execute(
            f"SELECT {columns} FROM jobs WHERE id IN (SELECT value FROM json_each(?))"
            f" AND {condition}",
            (json.dumps(sorted(set(ids))),),
        ).fetchall()

    def _set_queued(self, column: str, values: Mapping[int, Any]) -> dict[int, Any]:
        queued = self._rows(list(values), f"id, {column}", "status = 'queued'")
        was = {job: old for job, old in queued if old != values[job]}
        self.conn.executemany(
            f"UPDATE jobs SET {column} = ? WHERE id = ? AND status = 'queued'",
            [(value, job) for job, value in values.items() if job in was],
        )
        return was

    def _admit(self, admits: Sequence[Admit], where: Where) -> set[int]:
        queued = {row[0] for row in self._rows([a.job for a in admits], "id", "status = 'queued'")}
        self.conn.executemany(
            "UPDATE jobs SET status = 'admitted', pool = ?, policy = ?, priority = ?,"
            " worker = ?, attempt = attempt + 1, pid = NULL, pid_start = NULL, admitted_at = ?,"
            " claim_until = NULL, reason_code = NULL, reason_message = NULL,"
            " reason_detail = NULL, place_host = ?, place_name = ?, place_dir = ?"
            " WHERE id = ? AND status = 'queued'",
            [(a.pool, a.policy, a.priority, a.worker, self.now, *where, a.job)
             for a in admits if a.job in queued],
        )  # fmt: skip
        return queued

    def _allocate(self, rows: Sequence[tuple[int, str, str, str, int]]) -> None:
        self.conn.executemany(
            "INSERT INTO allocations (job, pool, policy, key, amount) VALUES (?, ?, ?, ?, ?)", rows
        )

    def _preempt(
        self, deadline: float, rows: Sequence[tuple[int, int, str, str, str]]
    ) -> dict[int, str]:
        open_ = dict(self._rows([row[0] for row in rows], "id, status", f"{HELD} AND stop IS NULL"))
        self.conn.executemany(
            "UPDATE jobs SET stop = 'preempt', stop_deadline = ?, preempted_for = ?,"
            " reason_code = ?, reason_message = ?, reason_detail = ?"
            f" WHERE id = ? AND {HELD} AND stop IS NULL",
            [(deadline, preemptor, code, message, detail, victim)
             for victim, preemptor, code, message, detail in rows if victim in open_],
        )  # fmt: skip
        return open_

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

    def _end_queued(self, status: Status, ends: Sequence[Said]) -> set[int]:
        queued = {row[0] for row in self._rows([e[0] for e in ends], "id", "status = 'queued'")}
        self.conn.executemany(
            "UPDATE jobs SET status = ?, reason_code = ?, reason_message = ?, reason_detail = ?,"
            " finished_at = ?, claim_until = NULL WHERE id = ? AND status = 'queued'",
            [(status.value, code, message, detail, self.now, job)
             for job, code, message, detail in ends if job in queued],
        )  # fmt: skip
        return queued

    def _set_reasons(self, rows: Sequence[Said]) -> set[int]:
        codes = dict(self._rows([row[0] for row in rows], "id, reason_code", "status = 'queued'"))
        self.conn.executemany(
            "UPDATE jobs SET reason_code = ?, reason_message = ?, reason_detail = ? WHERE id = ?",
            [(code, message, detail, job) for job, code, message, detail in rows if job in codes],
        )
        return {job for job, code, _, _ in rows if job in codes and codes[job] != code}

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
            self.event(start.job, Status.RUNNING.value, started_reason(start))

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
