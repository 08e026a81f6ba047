"""The default scheduler store: `.poolform/scheduler.db` beside the state (mode 0600).

WAL and `synchronous=NORMAL` as the state database: a process killed with kill -9 loses no
committed transaction. Every write is one `BEGIN IMMEDIATE` transaction, so `jobs submit`,
`jobs cancel` and the scheduler loop queue on the database lock instead of interleaving. The
capacity a job holds is the `allocations` table; a CHECK keeps amounts non-negative.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Collection, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from reconciler.errors import PoolformError
from reconciler.scheduler.executor import Place
from reconciler.scheduler.model import HOLDING, Decisions, Status
from reconciler.scheduler.reasons import Reason, ReasonCode, reason
from reconciler.scheduler.sqlite_rows import (
    COLUMNS,
    SCHEMA,
    add_columns,
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
    NewJob,
    Started,
    job_filter,
)

BUSY_TIMEOUT_S = 30.0
OWN_TABLES = frozenset({"meta", "jobs", "allocations", "events", "sqlite_sequence"})


class SqliteStore:
    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._mutex = threading.RLock()
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not self.path.exists():
            os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            self._conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            self._refuse_foreign()
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(SCHEMA)
            add_columns(self._conn)
        except sqlite3.Error as error:
            raise PoolformError(f"cannot open the scheduler store {self.path}: {error}") from error
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.chmod(f"{self.path}{suffix}", 0o600)

    def _refuse_foreign(self) -> None:
        """Another program's database put where the store belongs is left as it is: the
        scheduler's tables are never added beside tables it does not know."""
        tables = {
            name
            for (name,) in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        foreign = sorted(tables - OWN_TABLES)
        if foreign:
            self._conn.close()
            raise PoolformError(
                f"{self.path} is not a poolform scheduler store: it holds the table(s) "
                f"{', '.join(foreign)}; nothing was changed",
                hint="move it away; poolform creates its store there afresh",
            )

    @contextlib.contextmanager
    def _txn(self, mode: str = "IMMEDIATE") -> Iterator[sqlite3.Connection]:
        with self._mutex:
            conn = self._conn
            try:
                conn.execute(f"BEGIN {mode}")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except sqlite3.Error as error:
                raise PoolformError(f"scheduler store {self.path}: {error}") from error

    def close(self) -> None:
        with self._mutex:
            self._conn.close()

    # -- reading ---------------------------------------------------------------------------------

    def _select(self, conn: sqlite3.Connection, where: str, args: Sequence[Any]) -> list[JobRecord]:
        rows = conn.execute(f"SELECT {COLUMNS} FROM jobs {where} ORDER BY id", args).fetchall()
        held: dict[int, list[tuple[str, int]]] = {}
        ids = [row[0] for row in rows if row[10] in (Status.ADMITTED, Status.RUNNING)]
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for job, key, amount in conn.execute(
                f"SELECT job, key, amount FROM allocations WHERE job IN ({marks})", chunk
            ):
                held.setdefault(job, []).append((key, amount))
        return [record_of(row, tuple(sorted(held.get(row[0], ())))) for row in rows]

    def get(self, job_id: int) -> JobRecord | None:
        with self._txn("DEFERRED") as conn:
            found = self._select(conn, "WHERE id = ?", (job_id,))
        return found[0] if found else None

    def jobs(
        self,
        *,
        pool: str | None = None,
        status: Status | None = None,
        active: bool = False,
        ids: Collection[int] | None = None,
    ) -> list[JobRecord]:
        some = None if ids is None else ("id IN (SELECT value FROM json_each(?))", _ids(ids))
        where, args = job_filter(pool, status, active, "?", some)
        with self._txn("DEFERRED") as conn:
            return self._select(conn, where, args)

    def events(self, job_id: int) -> list[Event]:
        with self._txn("DEFERRED") as conn:
            rows = conn.execute(
                "SELECT job, time, status, code, message FROM events WHERE job = ? ORDER BY id",
                (job_id,),
            ).fetchall()
        return [event_of(row) for row in rows]

    def last_cycle(self) -> int:
        with self._txn("DEFERRED") as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = 'cycle'").fetchone()
        return cycle_of(row[0]) if row else 0

    # -- writing ---------------------------------------------------------------------------------

    @staticmethod
    def _event(conn: sqlite3.Connection, job: int, now: float, status: Status, why: Reason) -> None:
        conn.execute(
            "INSERT INTO events (job, time, status, code, message) VALUES (?, ?, ?, ?, ?)",
            (job, now, status.value, why.code.value, why.message),
        )

    def submit(self, jobs: Sequence[NewJob], now: float) -> list[JobRecord]:
        with self._txn() as conn:
            batch = 0
            ids: list[int] = []
            for job in jobs:
                why = job.reason or reason(ReasonCode.PENDING_EVALUATION)
                cursor = conn.execute(
                    "INSERT INTO jobs (batch, name, rank, num_jobs, request, run, envs, retries,"
                    " retries_left, status, reason_code, reason_message, reason_detail,"
                    " submitted_at, pool, subject, priority, preemptible)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        batch,
                        job.name,
                        job.rank,
                        job.num_jobs,
                        request_json(job.request),
                        job.run,
                        json.dumps(dict(job.envs)),
                        job.retries,
                        job.retries,
                        job.status.value,
                        why.code.value,
                        why.message,
                        why.detail_json(),
                        now,
                        job.pool,
                        job.subject,
                        job.priority,
                        int(job.request.preemptible),
                    ),
                )
                job_id = int(cursor.lastrowid or 0)
                if not batch:
                    batch = job_id
                    conn.execute("UPDATE jobs SET batch = ? WHERE id = ?", (batch, job_id))
                ids.append(job_id)
                self._event(conn, job_id, now, Status.QUEUED, reason(ReasonCode.SUBMITTED))
                if job.status is not Status.QUEUED:
                    self._event(conn, job_id, now, job.status, why)
            marks = ",".join("?" * len(ids))
            return self._select(conn, f"WHERE id IN ({marks})", ids) if ids else []

    def commit(
        self,
        decisions: Decisions,
        reasons: Mapping[int, Reason],
        now: float,
        grace: float,
        place: Place | None = None,
    ) -> Committed:
        admitted: list[int] = []
        preempting: list[int] = []
        where = (
            (None, None, None) if place is None else (place.host, place.host_name, place.jobs_dir)
        )
        with self._txn() as conn:
            for admit in decisions.admits:
                done = conn.execute(
                    "UPDATE jobs SET status = 'admitted', pool = ?, policy = ?, priority = ?,"
                    " worker = ?, attempt = attempt + 1, pid = NULL, pid_start = NULL, admitted_at = ?,"
                    " claim_until = NULL, reason_code = NULL, reason_message = NULL,"
                    " reason_detail = NULL, place_host = ?, place_name = ?, place_dir = ?"
                    " WHERE id = ? AND status = 'queued'",
                    (admit.pool, admit.policy, admit.priority, admit.worker, now, *where,
                     admit.job),
                ).rowcount  # fmt: skip
                if not done:
                    continue
                conn.executemany(
                    "INSERT INTO allocations (job, pool, policy, key, amount) VALUES (?,?,?,?,?)",
                    [(admit.job, admit.pool, admit.policy, k, v) for k, v in admit.amounts],
                )
                on = f" on worker {admit.worker}" if admit.worker else ""
                via = "" if admit.policy.endswith("/*") else f" via policy {admit.policy}"
                why = reason(ReasonCode.ADMITTED, pool=admit.pool, via=via, on=on)
                self._event(conn, admit.job, now, Status.ADMITTED, why)
                admitted.append(admit.job)
            for preempt in decisions.preempts:
                why = reason(ReasonCode.PREEMPTING, preemptor=preempt.preemptor, why=preempt.why)
                for victim in preempt.victims:
                    done = conn.execute(
                        "UPDATE jobs SET stop = 'preempt', stop_deadline = ?, preempted_for = ?,"
                        " reason_code = ?, reason_message = ?, reason_detail = ?"
                        " WHERE id = ? AND status IN ('admitted', 'running') AND stop IS NULL",
                        (
                            now + grace,
                            preempt.preemptor,
                            why.code.value,
                            why.message,
                            why.detail_json(),
                            victim,
                        ),
                    ).rowcount
                    if done:
                        status = conn.execute("SELECT status FROM jobs WHERE id = ?", (victim,))
                        self._event(conn, victim, now, Status(status.fetchone()[0]), why)
                        preempting.append(victim)
            for preemptor, until in decisions.claims.items():
                conn.execute(
                    "UPDATE jobs SET claim_until = ? WHERE id = ? AND status = 'queued'",
                    (until, preemptor),
                )
            for reject in decisions.rejects:
                self._end_queued(conn, reject.job, Status.REJECTED, reject.reason, now)
            self._reasons(conn, reasons, now)
            conn.execute(
                "INSERT INTO meta (key, value) VALUES ('cycle', ?) ON CONFLICT (key)"
                " DO UPDATE SET value = excluded.value",
                (str(decisions.cycle),),
            )
            records = (
                self._select(
                    conn,
                    f"WHERE id IN ({','.join('?' * len(admitted + preempting))})",
                    admitted + preempting,
                )
                if admitted or preempting
                else []
            )
        by_id = {r.id: r for r in records}
        return Committed(tuple(by_id[i] for i in admitted), tuple(by_id[i] for i in preempting))

    def _reasons(self, conn: sqlite3.Connection, reasons: Mapping[int, Reason], now: float) -> None:
        """Write the queued reasons that changed; a new code is also a history event."""
        for job, why in reasons.items():
            row = conn.execute(
                "SELECT reason_code FROM jobs WHERE id = ? AND status = 'queued'", (job,)
            ).fetchone()
            if row is None:
                continue
            conn.execute(
                "UPDATE jobs SET reason_code = ?, reason_message = ?, reason_detail = ?"
                " WHERE id = ?",
                (why.code.value, why.message, why.detail_json(), job),
            )
            if row[0] != why.code.value:
                self._event(conn, job, now, Status.QUEUED, why)

    def _end_queued(
        self, conn: sqlite3.Connection, job: int, status: Status, why: Reason, now: float
    ) -> bool:
        done = conn.execute(
            "UPDATE jobs SET status = ?, reason_code = ?, reason_message = ?, reason_detail = ?,"
            " finished_at = ?, claim_until = NULL WHERE id = ? AND status = 'queued'",
            (status.value, why.code.value, why.message, why.detail_json(), now, job),
        ).rowcount
        if done:
            self._event(conn, job, now, status, why)
        return bool(done)

    def started(self, starts: Sequence[Started], now: float) -> None:
        if not starts:
            return
        with self._txn() as conn:
            for start in starts:
                done = conn.execute(
                    "UPDATE jobs SET status = 'running', pid = ?, pid_start = ?,"
                    " started_at = COALESCE(started_at, ?) WHERE id = ? AND attempt = ?"
                    " AND status IN ('admitted', 'running')",
                    (start.pid, start.since, now, start.job, start.attempt),
                ).rowcount
                if done:
                    code = ReasonCode.ADOPTED if start.adopted else ReasonCode.STARTED
                    why = reason(code, pid=start.pid, attempt=start.attempt)
                    self._event(conn, start.job, now, Status.RUNNING, why)

    def killed(self, job_id: int, now: float) -> None:
        with self._txn() as conn:
            conn.execute("UPDATE jobs SET killed = 1 WHERE id = ?", (job_id,))

    def ended(self, endings: Sequence[Ended], now: float) -> list[int]:
        changed: list[int] = []
        if not endings:
            return changed
        with self._txn() as conn:
            for item in endings:
                ending, why = item.ending, item.ending.reason
                finished = None if ending.status is Status.QUEUED else now
                done = conn.execute(
                    "UPDATE jobs SET status = ?, reason_code = ?, reason_message = ?,"
                    " reason_detail = ?, exit_code = ?, retries_left = ?, finished_at = ?,"
                    " stop = NULL, stop_deadline = NULL, killed = 0, pid = NULL, pid_start = NULL,"
                    " worker = CASE WHEN ? = 'queued' THEN NULL ELSE worker END"
                    " WHERE id = ? AND attempt = ? AND status IN ('admitted', 'running')",
                    (
                        ending.status.value,
                        why.code.value,
                        why.message,
                        why.detail_json(),
                        ending.exit_code,
                        ending.retries_left,
                        finished,
                        ending.status.value,
                        item.job,
                        item.attempt,
                    ),
                ).rowcount
                if not done:
                    continue
                conn.execute("DELETE FROM allocations WHERE job = ?", (item.job,))
                self._event(conn, item.job, now, ending.status, why)
                changed.append(item.job)
        return changed

    def cancel(self, job_ids: Sequence[int], now: float, grace: float) -> list[JobRecord]:
        changed: list[int] = []
        why = reason(ReasonCode.CANCELLED)
        asked = reason(ReasonCode.CANCEL_REQUESTED)
        with self._txn() as conn:
            for job in job_ids:
                if self._end_queued(conn, job, Status.CANCELLED, why, now):
                    changed.append(job)
                    continue
                done = conn.execute(
                    "UPDATE jobs SET stop = 'cancel', stop_deadline = MIN(COALESCE(stop_deadline,"
                    " ?), ?), reason_code = ?, reason_message = ?, reason_detail = '{}'"
                    " WHERE id = ? AND status IN ('admitted', 'running')"
                    " AND (stop IS NULL OR stop = 'preempt')",
                    (now + grace, now + grace, asked.code.value, asked.message, job),
                ).rowcount
                if done:
                    status = conn.execute("SELECT status FROM jobs WHERE id = ?", (job,))
                    self._event(conn, job, now, Status(status.fetchone()[0]), asked)
                    changed.append(job)
            marks = ",".join("?" * len(changed))
            return self._select(conn, f"WHERE id IN ({marks})", changed) if changed else []


__all__ = ["HOLDING", "SqliteStore"]


def _ids(ids: Collection[int]) -> str:
    """A set of job ids as one argument (a JSON array): no limit on how many."""
    return json.dumps(sorted(int(job) for job in ids))
