"""Use cases for jobs: submit, list, show, cancel, logs. Plain functions over a
SchedulerContext; they return data and raise PoolformError, and never print or exit."""

from __future__ import annotations

import codecs
import errno
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from reconciler.errors import PoolformError
from reconciler.scheduler.context import SchedulerContext
from reconciler.scheduler.executor import Phase, Place, Placed, Process, Tracked
from reconciler.scheduler.explain import CandidateLine, explain
from reconciler.scheduler.jobfile import Overrides, check_queued_size, load_job, request_of
from reconciler.scheduler.lifecycle import (
    applied_workers,
    ending,
    removing,
    runs_elsewhere,
    snapshot_of,
    worker_gone,
    worker_removed,
)
from reconciler.scheduler.model import HOLDING, TERMINAL, Status
from reconciler.scheduler.reasons import Reason, ReasonCode, reason
from reconciler.scheduler.routing import resolve
from reconciler.scheduler.store import Ended, Ending, Event, JobRecord, Listed, NewJob


@dataclass(frozen=True)
class Submitted:
    jobs: list[JobRecord]
    rejected: Reason | None  # set when no route could ever run the job: nothing was queued


def submit(ctx: SchedulerContext, path: Path, overrides: Overrides) -> Submitted:
    job = load_job(path)
    request = request_of(job, overrides)
    count = overrides.num_jobs or job.num_jobs
    check_queued_size(path, job, count)
    config = ctx.read_config()
    routes = resolve(request, config)
    if isinstance(routes, Reason):
        status, why, pool, subject, priority = (
            Status.REJECTED,
            routes,
            request.pool,
            request.subject,
            request.priority,
        )
    else:
        first = routes[0]
        status, why, pool, priority = Status.QUEUED, None, first.pool, first.priority
        subject = request.subject or config.policies[first.policy].subject
    new = [
        NewJob(
            job.name,
            rank,
            count,
            request,
            job.run,
            job.envs,
            job.retries,
            status,
            why,
            pool,
            subject,
            priority,
        )
        for rank in range(count)
    ]
    records = ctx.store.submit(new, ctx.clock())
    return Submitted(records, why)


def list_jobs(
    ctx: SchedulerContext, pool: str | None = None, status: Status | None = None
) -> list[Listed]:
    found = ctx.store.listing(pool=pool, status=status)
    if pool is not None and not found:
        _known_pool(ctx, pool)
    return found


def _known_pool(ctx: SchedulerContext, pool: str) -> None:
    """An error when the pool is not applied and has no jobs either: a misspelt pool must not
    read as "no jobs there" (a pool an apply removed still lists its jobs). The configuration
    is asked first: a pool's history of jobs can be long."""
    applied = ctx.read_config().pools
    if pool not in applied and not ctx.store.listing(pool=pool):
        known = ", ".join(sorted(applied)) or "none"
        raise PoolformError(f"no pool named {pool} is applied (pools: {known})")


def _get(ctx: SchedulerContext, job_id: int) -> JobRecord:
    record = ctx.store.get(job_id)
    if record is None:
        raise PoolformError(f"no job {job_id}", hint="`poolform jobs list` shows every job")
    return record


def here(ctx: SchedulerContext) -> Place | None:
    """Where this command's executor runs attempts (None: it sees them from anywhere)."""
    return ctx.executor.place if isinstance(ctx.executor, Placed) else None


@dataclass(frozen=True)
class JobDetail:
    job: JobRecord
    events: list[Event]
    candidates: list[CandidateLine]
    unroutable: Reason | None  # a queued job no route would take now (rejected next cycle)
    here: Place | None = None  # this command's place, to tell whether the job runs elsewhere

    @property
    def elsewhere(self) -> bool:
        return self.job.status in HOLDING and runs_elsewhere(self.job, self.here)


def show(ctx: SchedulerContext, job_id: int) -> JobDetail:
    record = _get(ctx, job_id)
    events = ctx.store.events(job_id)
    if record.status is not Status.QUEUED:
        return JobDetail(record, events, [], None, here(ctx))
    config = ctx.read_config()
    snapshot = snapshot_of(config, ctx.store.jobs(active=True), 0, 0.0)
    lines = explain(record, snapshot)
    if isinstance(lines, Reason):
        return JobDetail(record, events, [], lines, here(ctx))
    return JobDetail(record, events, lines, None, here(ctx))


def cancel(
    ctx: SchedulerContext, job_ids: Sequence[int], pool: str | None, grace: float
) -> list[JobRecord]:
    """Queued jobs end cancelled now; running ones get SIGTERM now and SIGKILL from the
    scheduler after `grace`. Jobs already finished are left as they are. A job running at
    another place gets the stop request only: nothing here can signal it, and the scheduler
    there stops it (see `cancel_gone` for a place that is gone)."""
    if not job_ids and pool is None:
        raise PoolformError("name the jobs to cancel, or a pool with --pool")
    wanted = {job.id: job for job in (_get(ctx, job_id) for job_id in job_ids)}
    if pool is not None:
        # Only the pool's unfinished jobs are read: its history can be far longer.
        of_pool = ctx.store.jobs(pool=pool, active=True)
        if not of_pool:
            _known_pool(ctx, pool)  # misspelt: an error, not "nothing left to cancel"
        wanted.update((job.id, job) for job in of_pool)
    place = here(ctx)
    _record_ends(ctx, wanted.values(), place)
    changed = ctx.store.cancel(sorted(wanted), ctx.clock(), grace)
    for job in changed:
        if job.status in HOLDING and job.pid is not None and not runs_elsewhere(job, place):
            ctx.executor.signal(job.id, job.attempt, job.pid, kill=False)
    return changed


def being_cancelled(ctx: SchedulerContext, job_ids: Sequence[int]) -> list[JobRecord]:
    """Of the named jobs, those still held under a cancel request (read after a cancel that
    changed none of them: their deadline comes no later than the one it asked for)."""
    found = (ctx.store.get(job_id) for job_id in dict.fromkeys(job_ids))
    return [job for job in found if job and job.status in HOLDING and job.stop == "cancel"]


def _record_ends(ctx: SchedulerContext, jobs: Iterable[JobRecord], place: Place | None) -> None:
    """A held job whose process has already ended with a status (the scheduler is stopped, or
    has not looked since) finished on its own: its end is recorded as it was (succeeded, or
    failed with its code), never turned into a cancel of work that ran to its end. One whose
    worker an apply removed ended as the scheduler would record it: queued again (and then
    cancelled), not failed for the stop it was given. `jobs`: as read by this command."""
    endings = [
        Ended(job.id, job.attempt, result)
        for job in jobs
        if (result := _end_seen(ctx, job, place)) is not None
    ]
    if endings:
        ctx.store.ended(endings, ctx.clock())


def _end_seen(ctx: SchedulerContext, job: JobRecord, place: Place | None) -> Ending | None:
    """How a held job ends, when its process here has already exited with a status that no
    scheduler has recorded yet (None while it runs, runs elsewhere, or left no status)."""
    if job.status not in HOLDING or job.pid is None or runs_elsewhere(job, place):
        return None
    if isinstance(ctx.executor, Tracked):
        process = Process(job.pid, job.pid_start)
        seen = ctx.executor.observe(job.id, job.attempt, process=process)
    else:
        seen = ctx.executor.observe(job.id, job.attempt)
    if seen.phase is not Phase.EXITED:
        return None
    code = seen.exit_code
    if job.stop is None and code != 0 and (removing(job) or job.worker is not None):
        config = ctx.read_config()  # only then can its worker's removal change the end
        if removing(job) or worker_gone(job, applied_workers(config)):
            return worker_removed(job, code, config.serial)
    return ending(job, code)


def cancel_gone(ctx: SchedulerContext, job_ids: Sequence[int]) -> list[JobRecord]:
    """An operator's word that these jobs' attempts, at another place, are gone (the host
    died, its jobs directory was lost): each ends cancelled now, its capacity released,
    without a signal (nothing here can reach it) and never run again. Only for jobs held at
    a recorded place other than this command's: any other named job is an error, and then
    nothing changes. Jobs that ended meanwhile are left as they are."""
    if not job_ids:
        raise PoolformError("name the jobs whose place is gone: jobs cancel --gone ID...")
    place = here(ctx)
    endings: list[Ended] = []
    for job in (_get(ctx, job_id) for job_id in dict.fromkeys(job_ids)):
        if job.status in TERMINAL:
            continue
        if job.status not in HOLDING:
            raise PoolformError(
                f"job {job.id} is {job.status.value}, not running anywhere; nothing was changed",
                hint=f"`poolform jobs cancel {job.id}` cancels it",
            )
        if job.place is None:
            raise PoolformError(
                f"job {job.id}'s attempt was started by a poolform that did not record where "
                "attempts run; nothing was changed",
                hint=f"`poolform jobs cancel {job.id}` stops it as before",
            )
        if not runs_elsewhere(job, place):
            raise PoolformError(
                f"job {job.id} runs here ({job.place.describe()}); nothing was changed",
                hint=f"`poolform jobs cancel {job.id}` stops it; --gone is for a job whose "
                "place is gone",
            )
        if place is not None and job.place.jobs_dir == place.jobs_dir:
            _refuse_running_here(ctx, job)
        why = reason(ReasonCode.GONE, place=job.place.describe())
        gone = Ending(Status.CANCELLED, why, None, job.retries_left)
        endings.append(Ended(job.id, job.attempt, gone))
    changed = ctx.store.ended(endings, ctx.clock())
    return [record for job_id in changed if (record := ctx.store.get(job_id)) is not None]


def _refuse_running_here(ctx: SchedulerContext, job: JobRecord) -> None:
    """A job recorded under this very jobs directory by another host identity, whose wrapper
    this command sees running on this machine, is not gone: the host's identity changed
    (POOLFORM_HOST_ID set, changed or unset; the machine id replaced). Its capacity must not
    be freed while it runs."""
    seen = ctx.executor.observe(job.id, job.attempt)
    if seen.phase is Phase.RUNNING and seen.pid is not None and job.place is not None:
        raise PoolformError(
            f"job {job.id}'s process runs on this machine (pid {seen.pid}), though its place "
            f"names {job.place.describe()}: this host's identity changed since it started; "
            "nothing was changed",
            hint=f"run this host's scheduler with POOLFORM_HOST_ID='{job.place.host}' until "
            "the job ends, and it records the job as usual",
        )


def log_elsewhere(ctx: SchedulerContext, job_id: int) -> Place | None:
    """Where the job's latest attempt ran, when that is another place than this command's:
    its output was written there, out of this command's reach."""
    job, place = _get(ctx, job_id), here(ctx)
    if job.place is not None and place is not None and not job.place.same(place):
        return job.place
    return None


def logs(
    ctx: SchedulerContext,
    job_id: int,
    follow: bool,
    sleep: Callable[[float], None],
    poll: float = 0.2,
    on_waiting: Callable[[JobRecord], None] | None = None,
) -> Iterator[str]:
    """The job's output; with `follow`, new output as it comes until the job has ended.
    `on_waiting` is told once, with the job, when following one that has not started yet
    (queued or admitted) and has no output: the wait would otherwise be silent."""
    _get(ctx, job_id)
    told_waiting = False
    path = ctx.executor.log_path(job_id)
    offset = 0
    # Incremental: a character whose bytes straddle two reads is decoded whole.
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    place = here(ctx)
    # Without follow: the log as it was when first read. A job writing faster than a terminal
    # shows it would otherwise never let the command end.
    end: int | None = None
    while True:
        record = ctx.store.get(job_id)
        done = record is None or record.status in TERMINAL
        if follow and not done and record is not None:
            # Ended here though no scheduler has recorded it (none runs: `scheduler run
            # --once`): its output is whole, and waiting would never end. An end that queues
            # it again (a preemption, a removed worker) is followed into its next attempt.
            ended = _end_seen(ctx, record, place)
            done = ended is not None and ended.status in TERMINAL
        chunk, start, size = _read_from(path, offset)
        if not follow:
            end = size if end is None else end
            chunk = b"" if start < offset else chunk[: max(0, end - start)]
        if start < offset:  # truncated: what it holds now was written since
            text.reset()
        offset = start + len(chunk)
        if chunk:
            yield text.decode(chunk)
            continue  # read on to the end of what is written before stopping or waiting
        if not follow or done:
            if rest := text.decode(b"", final=True):
                yield rest
            return
        waiting = record is not None and record.status in (Status.QUEUED, Status.ADMITTED)
        if on_waiting is not None and waiting and not told_waiting and record is not None:
            told_waiting = True
            on_waiting(record)
        sleep(poll)


def _read_from(path: Path | None, offset: int) -> tuple[bytes, int, int]:
    """Up to 1 MiB of the log from `offset`, where it was read from, and the log's size: from
    its start when
    the log is now shorter than `offset` (truncated to make room, `: > output.log`, as
    `tail -F` does). The log is the job's own regular file: a symlink (in its place or as its
    job directory) or any other kind of file is refused, never followed, so `jobs logs`
    cannot be made to print a file outside the job's directory."""
    if path is None:
        return b"", offset, 0
    if path.parent.is_symlink():
        raise _not_a_log(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        return b"", offset, 0
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _not_a_log(path) from None
        raise PoolformError(f"cannot read the log {path}: {error.strerror}") from None
    found = os.fstat(fd)
    if not stat.S_ISREG(found.st_mode):  # checked before fdopen, which refuses a directory
        os.close(fd)
        raise _not_a_log(path)
    with os.fdopen(fd, "rb") as handle:
        start = 0 if found.st_size < offset else offset
        handle.seek(start)
        return handle.read(1 << 20), start, found.st_size


def _not_a_log(path: Path) -> PoolformError:
    return PoolformError(
        f"{path} is not the job's own log file (a symlink, a directory or a special file); "
        "not reading it",
        hint="the scheduler writes each job's output to a regular file in the job's directory",
    )
