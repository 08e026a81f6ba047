"""`jobs cancel --pool` reads the pool's unfinished jobs, not its history: a pool that has run
100,000 jobs took minutes to cancel the few still queued (every past job was read and decoded,
and the store's cancel compared ids in quadratic time)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconciler.errors import PoolformError
from reconciler.scheduler import jobs as usecases
from reconciler.scheduler.context import SchedulerContext
from reconciler.scheduler.loop import LoopSettings, SchedulerLoop
from reconciler.scheduler.model import Status
from reconciler.scheduler.sqlite_store import SqliteStore
from reconciler.scheduler.store import JobRecord, NewJob
from tests.scheduler.builders import config, request
from tests.scheduler.fakes import Clock, FakeExecutor, World

HISTORY = 300


def test_cancel_of_a_pool_reads_only_its_unfinished_jobs(tmp_path: Path) -> None:
    cfg = config(resource_pools={"p": {"gpu": 1}})
    store = SqliteStore(tmp_path / "scheduler.db")
    world, clock = World(), Clock()
    new = NewJob("j", 0, 1, request(pool="p", gpu=1), "run", pool="p")
    ended = [job.id for job in store.submit([new] * HISTORY, 0.0)]
    ctx = SchedulerContext(store, FakeExecutor(world), lambda: cfg, clock, tmp_path)
    try:
        usecases.cancel(ctx, ended, None, 30.0)  # the pool's history: HISTORY cancelled jobs
        running, *queued = (job.id for job in store.submit([new] * 3, 0.0))
        loop = SchedulerLoop(store, FakeExecutor(world), lambda: cfg, clock, LoopSettings())
        assert loop.cycle().admitted == [running]
        rows: list[int] = []
        jobs = store.jobs

        def counted(**kwargs: Any) -> list[JobRecord]:
            found = jobs(**kwargs)
            rows.append(len(found))
            return found

        store.jobs = counted  # type: ignore[method-assign]

        changed = usecases.cancel(ctx, [], "p", 30.0)

        assert sorted(job.id for job in changed) == [running, *queued]
        assert sum(rows) == 3, rows  # the three unfinished jobs, read once
        assert all(store.get(job) is not None for job in queued)
        assert {store.get(job).status for job in queued} == {Status.CANCELLED}  # type: ignore[union-attr]
        rows.clear()

        # Nothing left unfinished: the pool is applied, so its history is not read either.
        assert [job.id for job in usecases.cancel(ctx, [], "p", 30.0)] in ([], [running])
        assert sum(rows) <= 1, rows
        rows.clear()

        # A misspelt pool is still an error, not "nothing to cancel".
        with pytest.raises(PoolformError, match="no pool named q is applied"):
            usecases.cancel(ctx, [], "q", 30.0)
    finally:
        store.close()
