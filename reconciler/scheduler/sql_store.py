"""What the SQLite and PostgreSQL scheduler stores share: reading jobs, what they hold and their
history, and committing a cycle's decisions, written once over either connection.

Both stores keep the same columns (reconciler.scheduler.job_columns) in tables of the same
shape; each says only what differs: its tables' names, how a parameter and a set of job ids
are spelled, its transactions (a read's, a write's) and its set-wise Writes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from reconciler.scheduler.decoded_rows import DecodedRows
from reconciler.scheduler.executor import Place
from reconciler.scheduler.job_columns import COLUMNS, HELD_VALUES, STATUS, cycle_of
from reconciler.scheduler.job_rows import event_of, record_of
from reconciler.scheduler.model import Admit, Decisions, Preempt, Status
from reconciler.scheduler.postgres_tables import EVENT_COLUMNS
from reconciler.scheduler.reasons import Reason
from reconciler.scheduler.store import (
    Committed,
    Event,
    JobRecord,
    Listed,
    Removal,
    job_filter,
    listed,
)


class CycleWrites(Protocol):
    """The part of both stores' Writes (sqlite_writes, postgres_writes) a commit uses."""

    def move(self, moves: Mapping[int, str], serial: int, /) -> None: ...
    def reprioritize(self, priorities: Mapping[int, int], serial: int, /) -> None: ...
    def admit(self, admits: Sequence[Admit], place: Place | None, /) -> list[int]: ...
    def preempt(self, preempts: Sequence[Preempt], grace: float, /) -> list[int]: ...
    def claim(self, claims: Mapping[int, float], /) -> None: ...
    def end_queued(self, ends: Sequence[tuple[int, Reason]], status: Status, /) -> list[int]: ...
    def reasons(self, reasons: Mapping[int, Reason], /) -> None: ...
    def workers_gone(self, removals: Sequence[Removal], grace: float, /) -> list[int]: ...
    def flush(self) -> None: ...


class SqlStore(ABC):
    """The reads and the cycle's commit of a SchedulerStore over SQL. A connection is `Any`
    here: sqlite3's and psycopg's are alike in what is used (`execute`, rows as tuples)."""

    # Set by each store: its tables as SQL names, and its parameter placeholder.
    _jobs: str
    _allocations: str
    _events: str
    _meta: str
    _mark: str
    _decoded: DecodedRows
    # SQLite's read-only look at an empty file: no job was ever stored, and no table is there.
    _tableless = False

    @abstractmethod
    def _reading(self) -> AbstractContextManager[Any]:
        """A read's transaction (one consistent snapshot); its connection."""

    @abstractmethod
    def _writing(self) -> AbstractContextManager[Any]:
        """A write's transaction, under the write lock; its connection."""

    @abstractmethod
    def _writes(self, conn: Any, now: float) -> CycleWrites:
        """The store's set-wise writes within the transaction of `conn`."""

    @abstractmethod
    def _id_set(self, column: str) -> str:
        """The condition that `column` is among the ids of one parameter (`_id_arg`)."""

    @abstractmethod
    def _id_arg(self, ids: Collection[int]) -> Any:
        """A set of job ids as one parameter: no limit on how many."""

    def _rows(self, conn: Any, sql: str, args: Sequence[Any]) -> Iterable[tuple[Any, ...]]:
        """The rows of a query as they are read: one at a time is held (the cursor steps
        through them)."""
        return conn.execute(sql, args)  # type: ignore[no-any-return]

    def _among(self, ids: Collection[int]) -> tuple[str, tuple[Any]]:
        """The WHERE clause (and its argument) of the jobs among `ids`."""
        return f"WHERE {self._id_set('id')}", (self._id_arg(ids),)

    # -- reading -------------------------------------------------------------------------------

    def _select(
        self, conn: Any, where: str, args: Sequence[Any], *, whole: bool = False
    ) -> list[JobRecord]:
        """`whole`: the read is of every active job (see DecodedRows)."""
        sql = f"SELECT {COLUMNS} FROM {self._jobs} {where} ORDER BY id"
        rows = conn.execute(sql, args).fetchall()
        held: dict[int, list[tuple[str, int]]] = {}
        ids = [row[0] for row in rows if row[STATUS] in HELD_VALUES]
        if ids:
            for job, key, amount in conn.execute(
                f"SELECT job, key, amount FROM {self._allocations} WHERE {self._id_set('job')}",
                (self._id_arg(ids),),
            ):
                held.setdefault(job, []).append((key, amount))
        return self._decoded.records(rows, held, whole=whole)

    def get(self, job_id: int) -> JobRecord | None:
        with self._reading() as conn:
            found = self._select(conn, f"WHERE id = {self._mark}", (job_id,))
        return found[0] if found else None

    def jobs(
        self,
        *,
        pool: str | None = None,
        status: Status | None = None,
        active: bool = False,
        ids: Collection[int] | None = None,
    ) -> list[JobRecord]:
        some = None if ids is None else (self._id_set("id"), self._id_arg(ids))
        where, args = job_filter(pool, status, active, self._mark, some)
        whole = active and pool is None and status is None and ids is None
        if self._tableless:
            return []
        with self._reading() as conn:
            return self._select(conn, where, args, whole=whole)

    def listing(self, *, pool: str | None = None, status: Status | None = None) -> list[Listed]:
        where, args = job_filter(pool, status, False, self._mark)
        if self._tableless:
            return []
        shared: dict[str, str] = {}
        found: list[Listed] = []
        with self._reading() as conn:
            held: dict[int, list[tuple[str, int]]] = {}
            for job, key, amount in conn.execute(
                f"SELECT job, key, amount FROM {self._allocations}"
                f" WHERE job IN (SELECT id FROM {self._jobs} {where})",
                args,
            ):
                held.setdefault(job, []).append((key, amount))
            for row in self._rows(
                conn, f"SELECT {COLUMNS} FROM {self._jobs} {where} ORDER BY id", args
            ):
                holds = held.get(row[0])
                amounts = tuple(sorted(holds)) if holds else ()
                found.append(listed(record_of(row, amounts), shared))
        return found

    def events(self, job_id: int) -> list[Event]:
        with self._reading() as conn:
            rows = conn.execute(
                f"SELECT {EVENT_COLUMNS} FROM {self._events} WHERE job = {self._mark} ORDER BY id",
                (job_id,),
            ).fetchall()
        return [event_of(row) for row in rows]

    def last_cycle(self) -> int:
        with self._reading() as conn:
            row = conn.execute(f"SELECT value FROM {self._meta} WHERE key = 'cycle'").fetchone()
        return cycle_of(row[0]) if row else 0

    # -- writing -------------------------------------------------------------------------------

    def commit(
        self,
        decisions: Decisions,
        reasons: Mapping[int, Reason],
        now: float,
        grace: float,
        place: Place | None = None,
    ) -> Committed:
        with self._writing() as conn:
            writes = self._writes(conn, now)
            # First: a moved job admitted this cycle has its move in its history before it.
            writes.move(decisions.moves, decisions.serial)
            writes.reprioritize(decisions.priorities, decisions.serial)
            admitted = writes.admit(decisions.admits, place)
            preempting = writes.preempt(decisions.preempts, grace)
            writes.claim(decisions.claims)
            writes.end_queued([(r.job, r.reason) for r in decisions.rejects], Status.REJECTED)
            writes.reasons(reasons)
            conn.execute(
                f"INSERT INTO {self._meta} (key, value) VALUES ('cycle', {self._mark})"
                " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(decisions.cycle),),
            )
            writes.flush()
            wanted = admitted + preempting
            records = self._select(conn, *self._among(wanted)) if wanted else []
        by_id = {r.id: r for r in records}
        return Committed(tuple(by_id[i] for i in admitted), tuple(by_id[i] for i in preempting))

    def workers_gone(self, removals: Sequence[Removal], now: float, grace: float) -> list[int]:
        if not removals:
            return []
        with self._writing() as conn:
            writes = self._writes(conn, now)
            changed = writes.workers_gone(removals, grace)
            writes.flush()
        return changed
