"""The live loop's cycle on a deep queue: what a user waits for between `jobs submit` and running.

A store (SQLite; PostgreSQL too when POOLFORM_TEST_PG_URL is set) is filled with the bench's
10,000 queued jobs (every job its own submission) on the bench's 100 pools / 1,000 policies,
either on pools ~90% full of running jobs (as `big_snapshot(busy=True)` has them) or on empty
pools. Then N cycles of `SchedulerLoop` run on it with a no-op executor (bench/live_loop.py's,
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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._shared import calibration, write_figures
from bench.live_loop import (
    Meter,
    TimedStore,
    drop_schemas,
    fill,
    postgres_opener,
    sqlite_opener,
    timed_schedule,
)
from bench.scheduler_trace import big_config
from reconciler.scheduler.loop import LoopSettings, SchedulerLoop
from reconciler.scheduler.store import SchedulerStore

README = Path(__file__).resolve().parent / "README.md"
START, END = "<!-- live-cycle:start -->", "<!-- live-cycle:end -->"


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
                meter.reset()
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
