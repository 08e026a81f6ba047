"""A held job whose worker an apply removed (its worker pool replaced, shrunk below its busy
workers, or deleted): the pure pieces (which jobs, how their end is recorded, what they count
in a snapshot) and the loop that stops them, over a fake world of processes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from reconciler.scheduler.amounts import SCALE, WORKER
from reconciler.scheduler.lifecycle import (
    applied_workers,
    snapshot_of,
    worker_gone,
    worker_removed,
)
from reconciler.scheduler.loop import LoopSettings, SchedulerLoop
from reconciler.scheduler.model import AppliedConfig, Status
from reconciler.scheduler.reasons import ReasonCode
from reconciler.scheduler.sqlite_store import SqliteStore
from reconciler.scheduler.store import JobRecord, NewJob
from tests.scheduler.builders import config, request
from tests.scheduler.fakes import Clock, FakeExecutor, World

GRACE = 30.0


def _running(worker: str | None, **changes: object) -> JobRecord:
    job = JobRecord(
        id=7,
        batch=7,
        name="long",
        rank=0,
        num_jobs=1,
        request=request(pool="w"),
        run="sleep 600",
        envs={},
        retries=2,
        retries_left=2,
        status=Status.RUNNING,
        reason=None,
        submitted_at=0.0,
        pool="w",
        policy="w/*",
        worker=worker,
        attempt=1,
        pid=4242,
        amounts=((WORKER, SCALE),),
    )
    return replace(job, **changes)  # type: ignore[arg-type]


# -- pure pieces ---------------------------------------------------------------------------------


def test_only_a_held_job_on_a_worker_the_applied_pools_lack_has_lost_it() -> None:
    workers = applied_workers(config(worker_pools={"w": 1}, serial=5))
    assert workers == frozenset({"w-0"})
    assert worker_gone(_running("w-1"), workers)
    assert not worker_gone(_running("w-0"), workers)
    assert not worker_gone(_running(None), workers)  # a resource pool's job has no worker
    assert not worker_gone(_running("w-1", status=Status.QUEUED), workers)


def test_state_not_found_removes_no_worker() -> None:
    # Serial 0: state moved away or not mounted, not an apply that removed every pool.
    assert applied_workers(AppliedConfig(0, {}, {})) is None
    assert not worker_gone(_running("w-0"), None)


def test_its_end_queues_it_again_without_using_a_retry_and_names_worker_and_serial() -> None:
    for exit_code in (143, None):  # after SIGTERM, or killed after the grace period
        end = worker_removed(_running("w-1"), exit_code, serial=9)
        assert (end.status, end.retries_left, end.exit_code) == (Status.QUEUED, 2, exit_code)
        assert end.reason.code is ReasonCode.WORKER_REMOVED
        assert "w-1" in end.reason.message and "state serial 9" in end.reason.message
    # Even with no retry left: the apply took its machine, the job did nothing wrong.
    end = worker_removed(_running("w-1", retries_left=0), 143, serial=9)
    assert (end.status, end.retries_left) == (Status.QUEUED, 0)


def test_an_exit_0_or_a_stop_asked_before_ends_as_it_would_have() -> None:
    assert worker_removed(_running("w-1"), 0, serial=9).status is Status.SUCCEEDED
    cancelled = worker_removed(_running("w-1", stop="cancel"), 143, serial=9)
    assert cancelled.status is Status.CANCELLED
    preempted = worker_removed(_running("w-1", stop="preempt", preempted_for=3), 143, 9)
    assert (preempted.reason.code, preempted.retries_left) == (ReasonCode.PREEMPTED, 1)


def test_in_a_snapshot_it_holds_no_worker_and_nothing_of_its_pool_and_is_no_victim() -> None:
    cfg = config(worker_pools={"w": 1}, serial=5)
    kept, gone = _running("w-0", id=1), _running("w-1", id=2)
    snapshot = snapshot_of(cfg, [kept, gone], 1, 90.0)
    held = {h.id: h for h in snapshot.holding}
    assert (held[1].worker, held[1].amounts, held[1].stopping) == ("w-0", ((WORKER, SCALE),), False)
    assert (held[2].worker, held[2].amounts, held[2].stopping) == (None, (), True)
    # One running elsewhere is another place's to judge: left as it is.
    away = snapshot_of(cfg, [gone], 1, 90.0, elsewhere=frozenset({2}))
    assert away.holding[0].worker == "w-1" and not away.holding[0].stopping


# -- the loop ------------------------------------------------------------------------------------


class Applied:
    """The applied configuration a test changes, as an apply does."""

    def __init__(self, cfg: AppliedConfig):
        self.cfg = cfg

    def __call__(self) -> AppliedConfig:
        return self.cfg


def _loop(tmp_path: Path, workers: int) -> tuple[SqliteStore, World, Clock, Applied, SchedulerLoop]:
    store = SqliteStore(tmp_path / "scheduler.db")
    world, clock = World(), Clock()
    applied = Applied(config(worker_pools={"w": workers}, serial=1))
    loop = SchedulerLoop(store, FakeExecutor(world), applied, clock, LoopSettings(grace=GRACE))
    return store, world, clock, applied, loop


def _submit(store: SqliteStore, count: int) -> list[int]:
    new = NewJob("long", 0, 1, request(pool="w"), "sleep 600", retries=1, pool="w")
    return [store.submit([new], 0.0)[0].id for _ in range(count)]


def _job(store: SqliteStore, job: int) -> JobRecord:
    record = store.get(job)
    assert record is not None
    return record


def test_the_loop_stops_a_job_on_a_removed_worker_and_runs_it_again_after_it_ended(
    tmp_path: Path,
) -> None:
    store, world, clock, applied, loop = _loop(tmp_path, workers=2)
    try:
        first, second = _submit(store, 2)
        assert loop.cycle().admitted == [first, second]
        moved = next(j for j in (first, second) if _job(store, j).worker == "w-1")
        stays = first if moved == second else second
        world.processes[(moved, 1)].stubborn = True  # ignores SIGTERM
        applied.cfg = config(worker_pools={"w": 1}, serial=2)  # shrunk below its busy workers

        report = loop.cycle()
        assert report.removed == [moved] and report.killed == []
        assert world.processes[(moved, 1)].running  # SIGTERM sent, ignored: still running
        assert _job(store, moved).status is Status.RUNNING  # not queued while it runs
        applied.cfg = config(worker_pools={"w": 1}, serial=3)  # another apply meanwhile
        clock.advance(GRACE - 1)
        # A restarted scheduler keeps the recorded deadline (and the serial that removed it).
        loop = SchedulerLoop(store, FakeExecutor(world), applied, clock, LoopSettings(grace=GRACE))
        assert loop.cycle().removed == []  # recorded once; the grace not over yet
        assert world.processes[(moved, 1)].running

        clock.advance(1)
        assert loop.cycle().killed == [moved]  # SIGKILL once the grace is over
        report = loop.cycle()  # its end recorded; the one worker is busy with the other
        assert report.ended == [(moved, Status.QUEUED)]
        job = _job(store, moved)
        assert job.status is Status.QUEUED and job.retries_left == 1
        assert job.reason is not None and job.reason.code is ReasonCode.NO_WORKER_FREE
        history = [e.code for e in store.events(moved)]
        assert history == [
            "submitted", "admitted", "started", "worker_gone", "worker_removed", "no_worker_free"
        ]  # fmt: skip
        assert [e.message for e in store.events(moved) if e.code == "worker_removed"] == [
            "its worker w-1 of pool w was removed by the apply of state serial 2; "
            "stopped and queued again (no retry used)"
        ]
        assert _job(store, stays).status is Status.RUNNING
        assert world.processes[(stays, 1)].running

        world.processes[(stays, 1)].exit_code = 0
        loop.cycle()
        assert _job(store, moved).status is Status.RUNNING and _job(store, moved).attempt == 2
        assert [p.job for p in world.running()] == [moved]  # never two at once
    finally:
        store.close()


def test_a_replaced_pool_frees_its_workers_for_queued_jobs_at_once(tmp_path: Path) -> None:
    store, world, _, applied, loop = _loop(tmp_path, workers=1)
    try:
        (old,) = _submit(store, 1)
        loop.cycle()
        world.processes[(old, 1)].stubborn = True
        (waiting,) = _submit(store, 1)
        # The new pool's worker has another id (the local cloud's ids are new ones).
        cfg = config(worker_pools={"w": 1}, serial=2)
        pool = cfg.pools["w"]
        new = replace(pool, workers=(replace(pool.workers[0], id="new-0"),))
        applied.cfg = replace(cfg, pools={"w": new})
        report = loop.cycle()
        # The old job is still being stopped, but holds no worker of the new pool.
        assert report.removed == [old] and report.admitted == [waiting]
        assert _job(store, waiting).worker == "new-0"
        assert world.processes[(old, 1)].running
    finally:
        store.close()


def test_no_state_stops_nothing(tmp_path: Path) -> None:
    store, world, _, applied, loop = _loop(tmp_path, workers=1)
    try:
        (job,) = _submit(store, 1)
        loop.cycle()
        applied.cfg = AppliedConfig(0, {}, {})
        report = loop.cycle()
        assert report.no_state and report.removed == []
        assert world.processes[(job, 1)].running and _job(store, job).status is Status.RUNNING
    finally:
        store.close()
