"""What a cycle reads from the store: every active job once, then back only the rows its look
at the processes wrote (ended, adopted, killed), not the whole queue again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reconciler.scheduler.loop import LoopSettings, SchedulerLoop
from reconciler.scheduler.model import Status
from reconciler.scheduler.sqlite_store import SqliteStore
from reconciler.scheduler.store import JobRecord, NewJob
from tests.scheduler.builders import config, request
from tests.scheduler.fakes import Clock, FakeExecutor, World


def test_after_a_job_ends_the_cycle_reads_back_only_that_job_and_uses_its_freed_room(
    tmp_path: Path,
) -> None:
    cfg = config(resource_pools={"p": {"gpu": 2}})
    store = SqliteStore(tmp_path / "scheduler.db")
    world = World()
    reads: list[dict[str, Any]] = []
    jobs = store.jobs

    def counted(**kwargs: Any) -> list[JobRecord]:
        reads.append(kwargs)
        return jobs(**kwargs)

    store.jobs = counted  # type: ignore[method-assign]
    try:
        loop = SchedulerLoop(store, FakeExecutor(world), lambda: cfg, Clock(), LoopSettings())
        new = NewJob("j", 0, 1, request(pool="p", gpu=1), "run", pool="p")
        first, second, third, fourth = (store.submit([new], 0.0)[0].id for _ in range(4))
        assert loop.cycle().admitted == [first, second]
        world.processes[(first, 1)].exit_code = 0
        reads.clear()

        report = loop.cycle()

        assert reads == [{"active": True}, {"ids": {first}}]
        assert report.ended == [(first, Status.SUCCEEDED)]
        assert report.admitted == [third]  # the room job 1 freed, seen in the same cycle
        assert report.queued == 1 and report.running == 2
        assert store.get(fourth) is not None and store.get(fourth).status is Status.QUEUED  # type: ignore[union-attr]
    finally:
        store.close()
