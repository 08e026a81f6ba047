"""A worker pool on a cloud this machine does not reach (AWS, GCP) is known to the scheduler
by worker names (w-0, w-1, ...): shrunk from 3 to 2 workers, it names w-0 and w-1, and the
scheduler stops a job running on w-2 (lifecycle.worker_gone). The plan's note counted busy
workers the local cloud's way (idle ones go first: a note only when fewer are kept than are
busy), so one busy worker of three, shrunk to two, was no note while the scheduler stopped
its job. The note now follows the scheduler's own reading, checked here against it."""

from __future__ import annotations

from reconciler.scheduler.applied import applied_config
from reconciler.scheduler.impact import jobs_affected
from reconciler.scheduler.lifecycle import applied_workers, worker_gone
from reconciler.scheduler.model import Status
from state import ResourceRecord, StateSnapshot
from tests.scheduler.test_impact import STATE, WORKERS, change, job

SHRUNK = {**WORKERS, "pool": {"workers": 2}}


def test_a_job_on_a_named_worker_the_shrink_drops_is_named_as_the_scheduler_stops_it() -> None:
    jobs = [
        job(1, Status.RUNNING, "w", worker="w-0", pool="w"),
        job(2, Status.RUNNING, "w", worker="w-2", pool="w"),
    ]
    notes = jobs_affected(STATE, [change("worker_pool.w", "update", SHRUNK)], jobs)

    after = StateSnapshot.from_records(
        "lineage",
        5,
        [
            *(r for r in STATE.resources.values() if r.address != "worker_pool.w"),
            ResourceRecord("worker_pool.w", "worker_pool", SHRUNK),
        ],
    )
    workers = applied_workers(applied_config(after))
    assert [j.id for j in jobs if worker_gone(j, workers)] == [2]  # what the scheduler stops
    assert notes == (
        "worker_pool.w shrinks to 2 worker(s): 1 busy worker(s) go (1 job (2) running there), "
        "and the scheduler stops their jobs and queues them again",
    )
