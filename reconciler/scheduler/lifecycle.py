"""Pure pieces of a job's life around `schedule`: the snapshot built from store records, the
environment a job runs with, what a process's end means for the job, and which held jobs an
apply took the worker from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reconciler.scheduler.executor import Place
from reconciler.scheduler.model import (
    HOLDING,
    AppliedConfig,
    Holding,
    Queued,
    Snapshot,
    Status,
)
from reconciler.scheduler.reasons import BYPASSED, Reason, ReasonCode, reason
from reconciler.scheduler.store import Ending, JobRecord


def snapshot_of(
    config: AppliedConfig,
    records: Sequence[JobRecord],
    cycle: int,
    claim_ttl: float,
    max_bypass: int = 8,
    max_running: int | None = None,
    elsewhere: frozenset[int] = frozenset(),
) -> Snapshot:
    """`elsewhere`: held jobs whose attempts run where this scheduler cannot signal them; they
    hold their capacity and are never chosen as victims (a stop request nobody can act on
    would only keep their preemptor waiting).

    A held job whose worker an apply removed (`worker_gone`) is being stopped: it still takes
    a process slot (`max_running`), but no worker and nothing of its pool (its machine is gone;
    counted, it would make a worker of the new pool look used), and it is no victim."""
    queued: list[Queued] = []
    holding: list[Holding] = []
    workers = applied_workers(config)
    for job in records:
        if job.status is Status.QUEUED:
            queued.append(
                Queued(
                    job.id,
                    job.request,
                    job.submitted_at,
                    job.batch,
                    job.claim_until,
                    job.reason,
                    _bypassed(job.reason),
                    job.pool,
                    job.priority,
                )
            )
        elif job.status in (Status.ADMITTED, Status.RUNNING) and job.pool and job.policy:
            gone = job.id not in elsewhere and (removing(job) or worker_gone(job, workers))
            holding.append(
                Holding(
                    id=job.id,
                    pool=job.pool,
                    policy=job.policy,
                    amounts=() if gone else job.amounts,
                    priority=job.priority or 0,
                    preemptible=job.request.preemptible and job.id not in elsewhere,
                    admitted_at=job.admitted_at or 0.0,
                    batch=job.batch,
                    worker=None if gone else job.worker,
                    stopping=gone or job.stop is not None,
                    preempted_for=job.preempted_for if job.stop == "preempt" else None,
                )
            )
    remote = sum(1 for held in holding if held.id in elsewhere)
    return Snapshot(
        config, tuple(queued), tuple(holding), cycle, claim_ttl, max_bypass, max_running, remote
    )


def applied_workers(config: AppliedConfig) -> frozenset[str] | None:
    """Every worker of the applied worker pools; None while no state is found (serial 0):
    state that is not there removes no worker."""
    if config.serial == 0:
        return None
    return frozenset(w.id for pool in config.pools.values() for w in pool.workers)


def worker_gone(job: JobRecord, workers: frozenset[str] | None) -> bool:
    """The held job's recorded worker is not among the applied workers: an apply replaced
    its worker pool, shrank it below its busy workers, or removed it. A cloud ends such a job
    with its machine; the scheduler stops it itself, so it ends the same on every provider
    (the local cloud keeps a busy worker's directory for it meanwhile)."""
    return (
        workers is not None
        and job.worker is not None
        and job.status in HOLDING
        and job.worker not in workers
    )


def removing(job: JobRecord) -> bool:
    """The job is being stopped because an apply removed its worker (recorded by the loop
    as a SIGKILL deadline with no stop request, see SchedulerStore.workers_gone)."""
    return job.stop is None and job.stop_deadline is not None


def removal(job: JobRecord, serial: int) -> Reason:
    """Why a job is being stopped: its worker, and the state serial that first lacked it."""
    return reason(ReasonCode.WORKER_GONE, worker=job.worker, pool=job.pool, serial=serial)


def runs_elsewhere(job: JobRecord, here: Place | None) -> bool:
    """The job's attempt runs at a recorded place other than `here`, so nothing here can see,
    signal or fence it. An attempt with no recorded place (admitted by an earlier poolform),
    or a scheduler with no place, keeps the behaviour from before places were recorded."""
    return here is not None and job.place is not None and not job.place.same(here)


def _bypassed(why: Reason | None) -> int:
    """The anti-starvation count the last cycle left in the reason (0 if none, or damaged)."""
    count = why.detail.get(BYPASSED) if why is not None else None
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


def job_env(job: JobRecord, worker: str | None) -> dict[str, str]:
    """The job's own envs, then poolform's (and SkyPilot's names for rank and count)."""
    env = {str(k): str(v) for k, v in job.envs.items()}
    env.update(
        {
            "POOLFORM_JOB_ID": str(job.id),
            "POOLFORM_JOB_NAME": job.name,
            "POOLFORM_JOB_RANK": str(job.rank),
            "POOLFORM_NUM_JOBS": str(job.num_jobs),
            "POOLFORM_ATTEMPT": str(job.attempt),
            "POOLFORM_POOL": job.pool or "",
            "SKYPILOT_JOB_RANK": str(job.rank),
            "SKYPILOT_NUM_JOBS": str(job.num_jobs),
        }
    )
    if worker:
        env["POOLFORM_WORKER_ID"] = worker
    return env


def _stop_detail(job: JobRecord) -> Mapping[str, object]:
    return job.reason.detail if job.reason is not None else {}


def ending(job: JobRecord, exit_code: int | None) -> Ending:
    """What the end of a held job's process means: `exit_code` None when it left none (killed
    after the grace period, or vanished)."""
    if job.stop == "cancel":
        return Ending(Status.CANCELLED, reason(ReasonCode.CANCELLED), exit_code, job.retries_left)
    if exit_code == 0:
        return Ending(Status.SUCCEEDED, reason(ReasonCode.SUCCEEDED), 0, job.retries_left)
    if job.stop == "preempt":
        detail = _stop_detail(job)
        left = max(job.retries_left - 1, 0)
        why = reason(
            ReasonCode.PREEMPTED,
            preemptor=detail.get("preemptor", job.preempted_for),
            why=detail.get("why", "priority"),
            retries=left,
        )
        status = Status.QUEUED if job.retries_left > 0 else Status.FAILED
        return Ending(status, why, exit_code, left)
    if exit_code is None:
        return lost(job)
    # Retries are for preemption and lost processes, not for a job's own failure: none is
    # used (`jobs show` said "0 of 2 retries left" of a job that had run once).
    return Ending(
        Status.FAILED, reason(ReasonCode.EXITED, code=exit_code), exit_code, job.retries_left
    )


def lost(job: JobRecord) -> Ending:
    left = max(job.retries_left - 1, 0)
    why: Reason = reason(ReasonCode.LOST, retries=left)
    status = Status.QUEUED if job.retries_left > 0 else Status.FAILED
    return Ending(status, why, None, left)


def interrupted(job: JobRecord) -> Ending:
    """Admitted, but the scheduler stopped before the process started: queue it again, as it
    was, without using a retry (unless it was cancelled meanwhile: then it never runs)."""
    if job.stop == "cancel":
        return Ending(Status.CANCELLED, reason(ReasonCode.CANCELLED), None, job.retries_left)
    return Ending(Status.QUEUED, reason(ReasonCode.START_INTERRUPTED), None, job.retries_left)


def worker_removed(job: JobRecord, exit_code: int | None, serial: int) -> Ending:
    """How a held job whose worker an apply removed (`worker_gone`) ends, once its process has
    (`exit_code` None: it never started, was killed after the grace period, or vanished);
    `serial`: the applied state's, where no stop recorded the serial that removed it.

    Back to the queue without using a retry: the operator took the machine, the job did
    nothing wrong (a retry spent here would fail a job with none left for an apply). A job
    that still exited 0 succeeded, and a stop asked before (a cancel, a preemption) ends as
    it would have."""
    if job.stop is not None or exit_code == 0:
        return ending(job, exit_code)
    asked = job.reason is not None and job.reason.code is ReasonCode.WORKER_GONE
    detail = {**removal(job, serial).detail, **(_stop_detail(job) if asked else {})}
    why = reason(ReasonCode.WORKER_REMOVED, **detail)
    return Ending(Status.QUEUED, why, exit_code, job.retries_left)


def deferred(job: JobRecord, error: str) -> Ending:
    """An admitted job this machine had no room to start (a full disk, no process or file
    slot left): queued again, no retry used, as a job whose start the scheduler never made.
    Failing it would fail the whole queue, a cycle at a time, for one job's runaway log."""
    return Ending(
        Status.QUEUED, reason(ReasonCode.START_DEFERRED, error=error), None, job.retries_left
    )
