"""The default scheduler store: `.poolform/scheduler.db` beside the state (mode 0600).

WAL and `synchronous=NORMAL` as the state database: a process killed with kill -9 loses no
committed transaction. Every write is one `BEGIN IMMEDIATE` transaction, so `jobs submit`,
`jobs cancel` and the scheduler loop queue on the database lock instead of interleaving. The
capacity a job holds is the `allocations` table; a CHECK keeps amounts non-negative. A cycle's
changes are written set-wise (reconciler.scheduler.sqlite_writes), still in one transaction;
the rows of the loop's read are decoded once (reconciler.scheduler.decoded_rows). Its reads
and a cycle's commit are written once for it and the PostgreSQL store
(reconciler.scheduler.sql_store).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import threading
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

from reconciler.errors import PoolformError
from reconciler.scheduler.decoded_rows import DecodedRows
from reconciler.scheduler.model import HOLDING, Status
from reconciler.scheduler.reasons import ReasonCode, reason
from reconciler.scheduler.sql_store import SqlStore
from reconciler.scheduler.sqlite_rows import (
    ADDED_COLUMNS,
    SCHEMA,
    add_columns,
    checked_layout,
    request_json,
    stamp_layout,
)
from reconciler.scheduler.sqlite_writes import Writes
from reconciler.scheduler.store import (
    Ended,
    JobRecord,
    NewJob,
    Started,
    StoreUnwritable,
)
from state.private_files import owner_only

BUSY_TIMEOUT_S = 30.0
# What SQLite says when the disk refuses a write: full (SQLITE_FULL), or an I/O error, as a
# write past the file size limit or onto a failing disk is told (SQLITE_IOERR).
_UNWRITABLE = frozenset({sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR})
OWN_TABLES = frozenset({"meta", "jobs", "allocations", "events", "sqlite_sequence"})


class SqliteStore(SqlStore):
    def __init__(self, path: Path | str, *, read_only: bool = False):
        """`read_only`: only read an existing store as it is (plan's look at the queue): no
        file, table or column made, no mode changed; a store an earlier poolform made, which
        lacks columns added since, is refused rather than upgraded."""
        self.path = Path(path)
        self._mutex = threading.RLock()
        self._decoded = DecodedRows()
        self._tableless = False
        if read_only:
            self._open_read_only()
            return
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            if not self.path.exists():
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
        except OSError as error:
            raise PoolformError(
                f"cannot open the scheduler store {self.path}: {error.strerror}"
            ) from error
        try:
            self._conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            self._conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            self._refuse_newer()
            self._refuse_foreign()
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(SCHEMA)
            add_columns(self._conn)
            stamp_layout(self._conn)
        except sqlite3.Error as error:
            raise PoolformError(f"cannot open the scheduler store {self.path}: {error}") from error
        try:
            owner_only(self.path)
        except OSError as error:
            raise PoolformError(
                f"cannot make the scheduler store {error.filename} private (mode 0600): "
                f"{error.strerror}"
            ) from error
        self._file = _identity(self.path)

    def _open_read_only(self) -> None:
        # `mode=rw` (never `rwc`: no file is made) with `query_only`, not `mode=ro`: no
        # statement can write, and the connection may still do what SQLite does when the last
        # connection to a WAL database closes: remove its `-wal` and `-shm` files. A `mode=ro`
        # connection makes them and cannot remove them, so a plan left two empty files beside
        # a queue that had none. SQLite opens a file it may not write read-only all the same.
        try:
            self._conn = sqlite3.connect(
                f"{self.path.absolute().as_uri()}?mode=rw",
                uri=True,
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
            )
            self._conn.execute("PRAGMA query_only=ON")
            self._conn.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
            self._refuse_newer()
            self._refuse_foreign()
            have = {row[1] for row in self._conn.execute("PRAGMA table_info(jobs)")}
        except sqlite3.Error as error:
            raise PoolformError(f"cannot open the scheduler store {self.path}: {error}") from error
        self._tableless = not have  # an empty file: no job was ever stored
        missing = [name for name, _ in ADDED_COLUMNS if name not in have]
        if have and missing:
            self._conn.close()
            raise PoolformError(
                f"the scheduler store {self.path} was made by an earlier poolform (it lacks "
                f"{', '.join(missing)}); any job command upgrades it"
            )
        self._file = _identity(self.path)

    def _refuse_newer(self) -> None:
        """Checked before anything else: a newer poolform's tables are not another
        program's, and nothing is added to a layout this poolform does not know."""
        try:
            checked_layout(self._conn, self.path)
        except PoolformError:
            self._conn.close()
            raise

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
            if _identity(self.path) != self._file:
                # Deleted (or replaced) under an open connection, which still reads and writes
                # the old file: a long-running scheduler would go on with a queue nobody else
                # sees, and never run what is submitted to the new one.
                raise PoolformError(
                    f"the scheduler store {self.path} was deleted or replaced while this "
                    "process had it open; nothing more is read from or written to the old one",
                    hint="start the command again: it opens the store now at that path",
                )
            conn = self._conn
            try:
                conn.execute(f"BEGIN {mode}")
                try:
                    yield conn
                    conn.execute("COMMIT")
                except BaseException:
                    # SQLite ends some failed transactions itself (a full disk, a file past
                    # its size limit): a ROLLBACK then would fail and hide the cause.
                    if conn.in_transaction:
                        with contextlib.suppress(sqlite3.Error):
                            conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as error:
                if getattr(error, "sqlite_errorcode", 0) & 0xFF in _UNWRITABLE:
                    raise StoreUnwritable(f"scheduler store {self.path}: {error}") from error
                raise PoolformError(f"scheduler store {self.path}: {error}") from error

    def close(self) -> None:
        with self._mutex:
            self._conn.close()

    # -- what SqlStore asks of a store ------------------------------------------------------

    _jobs, _allocations, _events, _meta, _mark = "jobs", "allocations", "events", "meta", "?"

    def _reading(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return self._txn("DEFERRED")

    def _writing(self) -> contextlib.AbstractContextManager[sqlite3.Connection]:
        return self._txn()

    def _writes(self, conn: sqlite3.Connection, now: float) -> Writes:
        return Writes(conn, now)

    def _id_set(self, column: str) -> str:
        return f"{column} IN (SELECT value FROM json_each(?))"

    def _id_arg(self, ids: Collection[int]) -> str:
        return _ids(ids)

    # -- writing ---------------------------------------------------------------------------------

    def submit(self, jobs: Sequence[NewJob], now: float) -> list[JobRecord]:
        with self._txn() as conn:
            writes = Writes(conn, now)
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
                writes.event(job_id, Status.QUEUED.value, reason(ReasonCode.SUBMITTED))
                if job.status is not Status.QUEUED:
                    writes.event(job_id, job.status.value, why)
            writes.flush()
            return self._select(conn, *self._among(ids)) if ids else []

    def started(self, starts: Sequence[Started], now: float) -> None:
        if not starts:
            return
        with self._txn() as conn:
            writes = Writes(conn, now)
            writes.start(starts)
            writes.flush()

    def killed(self, job_id: int, now: float) -> None:
        with self._txn() as conn:
            conn.execute("UPDATE jobs SET killed = 1 WHERE id = ?", (job_id,))

    def ended(self, endings: Sequence[Ended], now: float) -> list[int]:
        if not endings:
            return []
        with self._txn() as conn:
            writes = Writes(conn, now)
            changed = writes.end(endings)
            writes.flush()
        return changed

    def cancel(self, job_ids: Sequence[int], now: float, grace: float) -> list[JobRecord]:
        cancelled = reason(ReasonCode.CANCELLED)
        with self._txn() as conn:
            writes = Writes(conn, now)
            ended = writes.end_queued([(job, cancelled) for job in job_ids], Status.CANCELLED)
            done = set(ended)
            rest = [job for job in job_ids if job not in done]
            changed = ended + writes.ask_to_cancel(rest, grace)
            writes.flush()
            return self._select(conn, *self._among(changed)) if changed else []


__all__ = ["HOLDING", "SqliteStore"]


def _identity(path: Path) -> tuple[int, int] | None:
    """Which file the path names (device and inode), None when it names none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_dev, found.st_ino


def _ids(ids: Collection[int]) -> str:
    """A set of job ids as one argument (a JSON array): no limit on how many."""
    return json.dumps(sorted(int(job) for job in ids))
