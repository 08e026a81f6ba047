"""A wall clock set back while a job that ignores SIGTERM is being stopped (an NTP step on a
VM that ran ahead): its SIGKILL deadline is recorded in wall time, so that a restarted
scheduler keeps it, and the step pushed it away by as much (an hour back: the job held its
capacity an hour past its grace). The loop counts the grace left on a clock that never jumps
too, and the earlier of the two ends it."""

from __future__ import annotations

from pathlib import Path

from reconciler.scheduler.loop import LoopSettings, SchedulerLoop
from reconciler.scheduler.model import Status
from reconciler.scheduler.sqlite_store import SqliteStore
from reconciler.scheduler.store import NewJob
from tests.scheduler.builders import config, request
from tests.scheduler.fakes import Clock, FakeExecutor, World

GRACE = 30.0


def test_a_wall_clock_set_back_does_not_stretch_the_grace_before_sigkill(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "scheduler.db")
    world, wall, steady = World(), Clock(), Clock(5.0)
    cfg = config(worker_pools={"w": 1}, serial=1)
    loop = SchedulerLoop(
        store, FakeExecutor(world), lambda: cfg, wall, LoopSettings(grace=GRACE), steady=steady
    )
    new = NewJob("stubborn", 0, 1, request(pool="w"), "sleep 600", pool="w")
    [job] = store.submit([new], wall.now)
    loop.cycle()
    [process] = world.running()
    process.stubborn = True
    store.cancel([job.id], wall.now, GRACE)
    loop.cycle()  # SIGTERM, ignored
    assert process.running

    wall.advance(-3600.0)  # the step back; the steady clock runs on
    steady.advance(GRACE - 1)
    wall.advance(GRACE - 1)
    loop.cycle()
    assert process.running  # within its grace still
    steady.advance(1)
    wall.advance(1)
    loop.cycle()  # SIGKILL: its grace is over, whatever the wall clock says
    assert not process.running
    loop.cycle()
    record = store.get(job.id)
    assert record is not None and record.status is Status.CANCELLED
