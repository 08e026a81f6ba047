"""The queue's disk full under a running `scheduler run` (a job's runaway log fills the disk
`.poolform/` is on): the cycle's write failed with "database or disk is full" and the
scheduler ended (exit 1), leaving its running jobs' ends, cancels and SIGKILL deadlines
unwatched until someone started it again, though the disk had room a moment later. It now
says so once, records nothing of that cycle (SQLite rolled it back), tries again every
interval with a loop made afresh (as a restarted scheduler: what it had started is found),
and says when the queue is written again. `--once` still ends with the error (exit 1).

SQLite's own limit on a database's pages (`PRAGMA max_page_count`) makes its writes fail
with SQLITE_FULL, as a full disk does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.cli.scheduler_context import job_context
from reconciler.scheduler.context import SchedulerContext
from reconciler.scheduler.loop import CycleReport, LoopSettings
from reconciler.scheduler.model import JobRequest
from reconciler.scheduler.pools import run_scheduler
from reconciler.scheduler.sqlite_store import SqliteStore
from reconciler.scheduler.store import NewJob, StoreUnwritable
from tests.adversarial.scheduler_setup import applied, job_file
from tests.scheduler.scenario import ok, statuses


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[SchedulerContext]:
    directory = applied(tmp_path)
    runs = tmp_path / "runs"
    job = job_file(tmp_path, f"kind: Job\nname: j\npool: seats\nrun: echo ran >> {runs}\n")
    ok("jobs", "submit", job, "--num-jobs", "2", "--chdir", directory)
    context = job_context(directory)
    try:
        yield context
    finally:
        context.close()


def _limit_pages(store: SqliteStore, pages: int | None) -> None:
    """No page beyond what the database has (None: SQLite's default limit)."""
    conn = store._conn
    count = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.execute(f"PRAGMA max_page_count = {count if pages is None else pages}")


def test_a_full_sqlite_queue_is_told_as_unwritable(ctx: SchedulerContext) -> None:
    store = ctx.store
    assert isinstance(store, SqliteStore)
    _limit_pages(store, None)
    wide = NewJob("w", 0, 1, JobRequest(pool="seats"), "echo " + "x" * 100_000)

    with pytest.raises(StoreUnwritable, match="database or disk is full"):
        store.submit([wide], 0.0)

    _limit_pages(store, 1_073_741_823)
    assert [job.id for job in store.submit([wide], 0.0)] == [3]


class Full:
    """The store, whose decision-cycle commits the disk refuses while `full` holds."""

    def __init__(self, store: Any) -> None:
        self.store, self.full, self.refused = store, True, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def commit(self, *args: Any, **kwargs: Any) -> Any:
        if self.full:
            self.refused += 1
            raise StoreUnwritable(f"scheduler store {self.store.path}: database or disk is full")
        return self.store.commit(*args, **kwargs)


def test_a_running_scheduler_waits_for_room_and_goes_on(ctx: SchedulerContext) -> None:
    full = Full(ctx.store)
    ctx.store = full  # type: ignore[assignment]
    said: list[str] = []
    reports: list[CycleReport] = []
    directory = ctx.state_dir.parent

    def sleep(_: float) -> None:
        if full.refused == 3:  # three cycles refused: room again
            full.full = False

    def done() -> bool:
        return set(statuses(directory).values()) == {"succeeded"}

    run_scheduler(ctx, once=False, interval=0.0, settings=LoopSettings(),
                  on_cycle=reports.append, should_stop=lambda: len(reports) > 300 or (bool(reports) and done()),
                  sleep=sleep, announce=said.append)  # fmt: skip

    assert full.refused == 3
    assert said == [
        f"scheduler: scheduler store {full.store.path}: database or disk is full; nothing of "
        "this cycle was recorded; running jobs keep running; trying again every 0s",
        "scheduler: the queue is written again; deciding again",
    ]
    assert (directory.parent / "runs").read_text() == "ran\nran\n"  # each ran once


def test_once_still_ends_with_the_error(ctx: SchedulerContext) -> None:
    ctx.store = Full(ctx.store)  # type: ignore[assignment]

    with pytest.raises(StoreUnwritable):
        run_scheduler(ctx, once=True, interval=0.0, settings=LoopSettings(),
                      on_cycle=lambda _: None, should_stop=lambda: False,
                      sleep=lambda _: None)  # fmt: skip

    assert set(statuses(ctx.state_dir.parent).values()) == {"queued"}
