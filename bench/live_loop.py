"""The live scheduler loop's harness, shared by bench_scheduler.py (d) and bench_live_cycle.py:
no-op executors, a store filled with the bench's queue through its own calls, and meters of the
time spent in the store (its reads and its writes apart) and in `schedule`."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import reconciler.scheduler.loop as loop_module
from bench.scheduler_trace import big_snapshot
from reconciler.scheduler.executor import Launch, Observation, Phase
from reconciler.scheduler.model import Admit, AppliedConfig, Decisions, JobRequest
from reconciler.scheduler.postgres_store import PostgresStore
from reconciler.scheduler.sqlite_store import SqliteStore
from reconciler.scheduler.store import NewJob, SchedulerStore, Started

QUEUED = 10_000


class NoopExecutor:
    """Starts nothing: every attempt 'runs' and has exited 0 by the next look."""

    def __init__(self) -> None:
        self.started: dict[tuple[int, int], int] = {}

    def start(self, launch: Launch) -> int:
        self.started[(launch.job, launch.attempt)] = len(self.started) + 1
        return len(self.started)

    def observe(self, job: int, attempt: int, *, fence: bool = False) -> Observation:
        pid = self.started.get((job, attempt))
        if pid is None:
            return Observation(Phase.NOT_STARTED)
        return Observation(Phase.EXITED, pid, 0)

    def signal(self, job: int, attempt: int, pid: int, *, kill: bool) -> None:
        return None

    def log_path(self, job: int) -> None:
        return None


class RunningExecutor(NoopExecutor):
    """The no-op executor, but a process runs until it is signalled (then it
    has exited 0 by the next look): the pools stay as full as the store says they are."""

    def __init__(self) -> None:
        super().__init__()
        self.signalled: set[tuple[int, int]] = set()

    def observe(self, job: int, attempt: int, *, fence: bool = False) -> Observation:
        pid = self.started.get((job, attempt))
        if pid is None:
            return Observation(Phase.NOT_STARTED)
        if (job, attempt) in self.signalled:
            return Observation(Phase.EXITED, pid, 0)
        return Observation(Phase.RUNNING, pid)

    def signal(self, job: int, attempt: int, pid: int, *, kill: bool) -> None:
        self.signalled.add((job, attempt))


@dataclass
class Meter:
    """Seconds spent in the store and in `schedule`, and the statements the store sent."""

    store_s: float = 0.0
    schedule_s: float = 0.0
    # CPU seconds (of this process: the server's work on PostgreSQL is not in them), which
    # move less than wall time with the other work on a shared machine
    store_cpu_s: float = 0.0
    read_cpu_s: float = 0.0
    schedule_cpu_s: float = 0.0
    calls: int = 0  # execute / executemany / COPY from Python
    steps: int = 0  # SQLite: statements stepped (executemany steps one per row)
    by_method: dict[str, float] = field(default_factory=dict)

    @property
    def read_s(self) -> float:
        """The store's reads: the jobs (and the cycle number) the loop reads."""
        return sum(s for name, s in self.by_method.items() if name in READS)

    @property
    def write_s(self) -> float:
        """The store's writes (each a transaction; a commit reads back the jobs it admitted
        and the victims it asked to stop, to start and signal them)."""
        return self.store_s - self.read_s

    @property
    def write_cpu_s(self) -> float:
        return self.store_cpu_s - self.read_cpu_s

    def reset(self) -> None:
        self.store_s = self.schedule_s = 0.0
        self.store_cpu_s = self.read_cpu_s = self.schedule_cpu_s = 0.0
        self.calls = self.steps = 0
        self.by_method.clear()


READS = frozenset({"jobs", "get", "last_cycle", "events"})


class TimedStore:
    """The store as the loop sees it, with every call timed."""

    def __init__(self, store: SchedulerStore, meter: Meter) -> None:
        self._store, self._meter = store, meter

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started, cpu = time.perf_counter(), time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                spent, spent_cpu = time.perf_counter() - started, time.process_time() - cpu
                self._meter.store_s += spent
                self._meter.store_cpu_s += spent_cpu
                if name in READS:
                    self._meter.read_cpu_s += spent_cpu
                self._meter.by_method[name] = self._meter.by_method.get(name, 0.0) + spent

        return timed


class CountedConnection:
    """A driver connection that counts the statements sent through it."""

    def __init__(self, conn: Any, meter: Meter) -> None:
        self._conn, self._meter = conn, meter

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        self._meter.calls += 1
        return self._conn.execute(*args, **kwargs)

    def executemany(self, *args: Any, **kwargs: Any) -> Any:
        self._meter.calls += 1
        return self._conn.executemany(*args, **kwargs)

    def cursor(self, *args: Any, **kwargs: Any) -> Any:
        return CountedCursor(self._conn.cursor(*args, **kwargs), self._meter)


class CountedCursor:
    def __init__(self, cursor: Any, meter: Meter) -> None:
        self._cursor, self._meter = cursor, meter

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)

    def __enter__(self) -> CountedCursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self._cursor.close()

    def execute(self, *args: Any, **kwargs: Any) -> Any:
        self._meter.calls += 1
        return self._cursor.execute(*args, **kwargs)

    def executemany(self, *args: Any, **kwargs: Any) -> Any:
        self._meter.calls += 1
        return self._cursor.executemany(*args, **kwargs)

    def copy(self, *args: Any, **kwargs: Any) -> Any:
        self._meter.calls += 1
        return self._cursor.copy(*args, **kwargs)


@contextmanager
def timed_schedule(meter: Meter) -> Iterator[None]:
    real = vars(loop_module)["schedule"]

    def timed(*args: Any, **kwargs: Any) -> Any:
        started, cpu = time.perf_counter(), time.process_time()
        try:
            return real(*args, **kwargs)
        finally:
            meter.schedule_s += time.perf_counter() - started
            meter.schedule_cpu_s += time.process_time() - cpu

    setattr(loop_module, "schedule", timed)  # noqa: B010 - the name the loop calls
    try:
        yield
    finally:
        setattr(loop_module, "schedule", real)  # noqa: B010


def fill(store: SchedulerStore, config: AppliedConfig, busy: bool, seed: int) -> RunningExecutor:
    """The bench's queue (every job its own submission) and, on busy pools, its running jobs,
    written through the store's own calls; returns an executor that sees them running."""
    snapshot = big_snapshot(config, QUEUED, busy=busy, seed=seed, batch=1)
    for queued in snapshot.queued:
        store.submit([NewJob("q", 0, 1, queued.request, "true")], 0.0)
    policies = config.policies
    holders = []
    for held in snapshot.holding:
        subject = policies[held.policy].subject
        resources = tuple((k, v) for k, v in held.amounts if k != "step_run")
        request = JobRequest(subject=subject, resources=resources, preemptible=held.preemptible)
        (record,) = store.submit([NewJob("h", 0, 1, request, "true")], 0.0)
        holders.append(Admit(record.id, held.pool, held.policy, held.amounts, held.priority))
    executor = RunningExecutor()
    if holders:
        store.commit(Decisions(0, config.serial, admits=tuple(holders)), {}, 0.0, 30.0)
        starts = []
        for admit in holders:
            executor.started[(admit.job, 1)] = admit.job
            starts.append(Started(admit.job, 1, admit.job))
        store.started(starts, 0.0)
    return executor


def sqlite_opener(directory: Path) -> Callable[[Meter], SchedulerStore]:
    def open_store(meter: Meter) -> SchedulerStore:
        path = directory / f"scheduler-{time.monotonic_ns()}.db"
        store = SqliteStore(path)

        def step(_statement: str) -> None:
            meter.steps += 1

        store._conn.set_trace_callback(step)
        store._conn = CountedConnection(store._conn, meter)  # type: ignore[assignment]
        return store

    return open_store


def postgres_opener(url: str, schemas: list[str]) -> Callable[[Meter], SchedulerStore]:
    def open_store(meter: Meter) -> SchedulerStore:
        schema = f"bench_live_{os.getpid()}_{len(schemas)}"
        schemas.append(schema)
        store = PostgresStore(url, schema=schema)
        store._conn = CountedConnection(store._conn, meter)  # type: ignore[assignment]
        return store

    return open_store


def drop_schemas(url: str, schemas: list[str]) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for schema in schemas:
            conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
