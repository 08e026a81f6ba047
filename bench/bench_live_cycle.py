"""The live loop's cycle on a deep queue: what a user waits for between `jobs submit` and running.

A store (SQLite; PostgreSQL too when POOLFORM_TEST_PG_URL is set) is filled with the bench's
10,000 queued jobs (every job its own submission) on the bench's 100 pools / 1,000 policies,
either on pools ~90% full of running jobs (as `big_snapshot(busy=True)` has them) or on empty
pools. Then N cycles of `SchedulerLoop` run on it with a no-op executor (bench_scheduler.py's,
except that a process runs until it is signalled: then it has exited by the next look) and an
injected clock that moves one second a cycle. Per cycle: wall and CPU time, the store's share
(every store call the loop makes), `schedule`'s share, and the statements the store sent (SQLite:
calls into the driver, and the statements SQLite stepped; PostgreSQL: the round trips).

    python bench/bench_live_cycle.py              # --cycles N, --no-write to only print
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import reconciler.scheduler.loop as loop_module
from bench._shared import write_figures
from bench.bench_scheduler import NoopExecutor, calibration
from bench.scheduler_trace import big_config, big_snapshot
from reconciler.scheduler.executor import Observation, Phase
from reconciler.scheduler.loop import LoopSettings, SchedulerLoop
from reconciler.scheduler.model import Admit, AppliedConfig, Decisions, JobRequest
from reconciler.scheduler.postgres_store import PostgresStore
from reconciler.scheduler.sqlite_store import SqliteStore
from reconciler.scheduler.store import NewJob, SchedulerStore, Started

README = Path(__file__).resolve().parent / "README.md"
START, END = "<!-- live-cycle:start -->", "<!-- live-cycle:end -->"
QUEUED = 10_000


class RunningExecutor(NoopExecutor):
    """bench_scheduler.py's no-op executor, but a process runs until it is signalled (then it
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
    calls: int = 0  # execute / executemany / COPY from Python
    steps: int = 0  # SQLite: statements stepped (executemany steps one per row)
    by_method: dict[str, float] = field(default_factory=dict)


class TimedStore:
    """The store as the loop sees it, with every call timed."""

    def __init__(self, store: SchedulerStore, meter: Meter) -> None:
        self._store, self._meter = store, meter

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                spent = time.perf_counter() - started
                self._meter.store_s += spent
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
        started = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            meter.schedule_s += time.perf_counter() - started

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


@dataclass
class CycleFigures:
    wall_s: float
    cpu_s: float
    store_s: float
    schedule_s: float
    calls: int
    steps: int
    admitted: int
    preempted: int
    ended: int


def run_cycles(
    open_store: Callable[[Meter], SchedulerStore], busy: bool, cycles: int, seed: int
) -> list[CycleFigures]:
    config = big_config()
    meter = Meter()
    store = open_store(meter)
    try:
        executor = fill(store, config, busy, seed)
        clock = [1_000.0]
        loop = SchedulerLoop(
            TimedStore(store, meter),
            executor,
            lambda: config,
            lambda: clock[0],
            LoopSettings(max_running=None),
        )
        figures = []
        with timed_schedule(meter):
            for _ in range(cycles):
                meter.store_s = meter.schedule_s = 0.0
                meter.calls = meter.steps = 0
                wall, cpu = time.perf_counter(), time.process_time()
                report = loop.cycle()
                figures.append(
                    CycleFigures(
                        time.perf_counter() - wall,
                        time.process_time() - cpu,
                        meter.store_s,
                        meter.schedule_s,
                        meter.calls,
                        meter.steps,
                        len(report.admitted),
                        len(report.preempted),
                        len(report.ended),
                    )
                )
                clock[0] += 1.0
    finally:
        store.close()
    return figures


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


def summary(kind: str, busy: bool, figures: list[CycleFigures]) -> str:
    first, rest = figures[0], figures[1:] or figures[:1]

    def med(values: list[float]) -> float:
        return statistics.median(values) * 1000

    pools = "pools ~90% full" if busy else "empty pools"
    unit = "statements" if kind == "SQLite" else "round trips"
    steps = f" ({first.steps:,} stepped)" if kind == "SQLite" else ""
    return (
        f"| {kind}, {pools}: first cycle ({first.admitted:,} admitted, {first.preempted:,} "
        f"preempting, {first.ended:,} ended) | {first.wall_s * 1000:,.0f} ms "
        f"({first.cpu_s * 1000:,.0f} CPU) | {first.store_s * 1000:,.0f} ms | "
        f"{first.schedule_s * 1000:,.0f} ms | {first.calls:,} {unit}{steps} |\n"
        f"| {kind}, {pools}: later cycles, median of {len(rest)} | "
        f"{med([f.wall_s for f in rest]):,.0f} ms ({med([f.cpu_s for f in rest]):,.0f} CPU) | "
        f"{med([f.store_s for f in rest]):,.0f} ms | {med([f.schedule_s for f in rest]):,.0f} ms"
        f" | {statistics.median([f.calls for f in rest]):,.0f} {unit} |"
    )


def write_readme(lines: list[str], speed: float) -> None:
    write_figures(README, START, END, lines, speed)


HEADER = [
    "| live cycle, 10,000 queued (each its own submission), 100 pools, 1,000 policies "
    "| wall (CPU) | store | `schedule` | sent by the store |",
    "| --- | --- | --- | --- | --- |",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-write", action="store_true", help="print only")
    parser.add_argument("--only", choices=("sqlite", "postgres"), help="one store only")
    args = parser.parse_args()
    speed = calibration()
    print(f"10 million Python additions: {speed:.2f} s of CPU", flush=True)
    lines = list(HEADER)
    print("\n".join(lines), flush=True)
    url = os.environ.get("POOLFORM_TEST_PG_URL")
    with tempfile.TemporaryDirectory() as directory:
        openers: list[tuple[str, Callable[[Meter], SchedulerStore]]] = []
        if args.only != "postgres":
            openers.append(("SQLite", sqlite_opener(Path(directory))))
        schemas: list[str] = []
        if url and args.only != "sqlite":
            openers.append(("PostgreSQL", postgres_opener(url, schemas)))
        try:
            for kind, opener in openers:
                for busy in (True, False):
                    figures = run_cycles(opener, busy, args.cycles, args.seed)
                    line = summary(kind, busy, figures)
                    print(line, flush=True)
                    lines.append(line)
        finally:
            if url and schemas:
                drop_schemas(url, schemas)
    if not args.no_write:
        write_readme(lines, speed)


if __name__ == "__main__":
    main()
