"""The scheduler loop: only I/O around `schedule`.

One cycle:
1. reconcile the processes of held jobs (ended ones release their capacity; stop requests past
   their grace period get SIGKILL; attempts a dead scheduler left half-started are adopted or
   fenced and queued again; attempts that run at another place, out of this executor's
   sight, are left as they are: running, holding their capacity); a held job whose worker
   the applied configuration no longer has (an apply replaced or shrank its worker pool) is
   stopped as a preempted one is, and queued again without using a retry once it has ended;
2. read the applied configuration (a moved state serial is an apply: queued jobs are checked
   against it again) and the store into one snapshot (read before step 1, which uses its
   workers);
3. `schedule(snapshot, now)`;
4. commit the decisions in one store transaction, then SIGTERM the victims and start the
   admitted jobs.
The clock is injected; nothing here decides who runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from reconciler.scheduler.cycle_report import (
    SHORTAGE_PAUSE,
    SHORTAGES,
    CycleReport,
    InputUnreadable,
    LoopSettings,
    MarkWorkers,
)
from reconciler.scheduler.executor import Executor, Launch
from reconciler.scheduler.lifecycle import deferred, job_env, runs_elsewhere, snapshot_of
from reconciler.scheduler.model import HOLDING, AppliedConfig, Status
from reconciler.scheduler.process_watch import ProcessWatch
from reconciler.scheduler.reasons import ReasonCode, reason
from reconciler.scheduler.schedule import schedule
from reconciler.scheduler.store import Ended, Ending, JobRecord, SchedulerStore, Started

__all__ = [
    "SHORTAGES",
    "SHORTAGE_PAUSE",
    "CycleReport",
    "InputUnreadable",
    "LoopSettings",
    "MarkWorkers",
    "SchedulerLoop",
]


class SchedulerLoop(ProcessWatch):
    def __init__(
        self,
        store: SchedulerStore,
        executor: Executor,
        read_config: Callable[[], AppliedConfig],
        clock: Callable[[], float],
        settings: LoopSettings | None = None,
        mark_workers: MarkWorkers | None = None,
        steady: Callable[[], float] | None = None,
    ):
        super().__init__(store, executor, clock, settings or LoopSettings(), steady)
        self.mark_workers = mark_workers
        self._marked: tuple[frozenset[str], frozenset[str]] | None = None
        self.read_config = read_config
        self.serial: int | None = None
        self._unreadable: str | None = None  # why the last cycle could not read its inputs
        self._shortage: tuple[str, float] | None = None  # the last start's shortage, and when

    def cycle(self) -> CycleReport:
        try:
            config = self.read_config()
        except InputUnreadable as error:
            return self._blind(error.message)
        report = CycleReport(self.store.last_cycle() + 1, config.serial)
        report.readable_again = self._unreadable is not None
        self._unreadable = None
        if config.serial == 0:
            # No state at all (moved away, a volume not mounted): its absence is no apply that
            # removed every pool, so nothing queued is rejected on it. Processes are still
            # watched; deciding waits until state is back.
            records = self.reconcile(report)
            report.no_state = True
            report.serial_moved = self.serial != 0  # said once, when state goes
            self.serial = 0
            report.queued = sum(1 for r in records if r.status is Status.QUEUED)
            report.running = sum(1 for r in records if r.status in HOLDING)
            return report
        if self._shortage is not None and 0 <= self.clock() - self._shortage[1] < SHORTAGE_PAUSE:
            # Paused after a shortage: the running jobs are watched, nothing is decided (the
            # serial read stands: a change is told when deciding again).
            records = self.reconcile(report)
            report.shortage = self._shortage[0]
            report.queued = sum(1 for r in records if r.status is Status.QUEUED)
            report.running = sum(1 for r in records if r.status in HOLDING)
            return report
        report.serial_moved = self.serial is not None and self.serial != config.serial
        self.serial = config.serial
        records = self.reconcile(report, config=config)
        now = self.clock()
        snapshot = snapshot_of(
            config,
            records,
            report.cycle,
            self.settings.claim_seconds,
            self.settings.max_bypass,
            self.settings.max_running,
            frozenset(job.id for job in report.elsewhere),
        )
        decisions = schedule(snapshot, now)
        stored = {job.id: job.reason for job in snapshot.queued}
        changed = {j: r for j, r in decisions.reasons.items() if stored.get(j) != r}
        committed = self.store.commit(
            decisions, changed, now, self.settings.grace, place=self.place
        )
        for victim in committed.preempting:
            if victim.pid is not None and not runs_elsewhere(victim, self.place):
                self.executor.signal(victim.id, victim.attempt, victim.pid, kill=False)
                self._signalled.add((victim.id, victim.attempt))
        workers = {w.id: w.directory for pool in config.pools.values() for w in pool.workers}
        starts: list[Started] = []
        short: str | None = None
        for job in committed.admitted:
            outcome = short or self._start(job, workers.get(job.worker or ""), report)
            if isinstance(outcome, Started):
                starts.append(outcome)
            elif outcome is not None:  # a shortage: this job and those after it wait
                short = outcome
                if self.store.ended([Ended(job.id, job.attempt, deferred(job, short))], now):
                    report.deferred.append(job.id)
        if short is not None:
            self._shortage, report.shortage = (short, self.clock()), short
        self.store.started(starts, self.clock())
        self._mark(config, records, committed.admitted)
        report.admitted = [job.id for job in committed.admitted]
        report.preempted = [job.id for job in committed.preempting]
        report.rejected = [r.job for r in decisions.rejects]
        report.queued = len(decisions.reasons) + len(report.deferred)
        # what holds capacity now: a job whose start failed holds none
        report.running = sum(1 for r in records if r.status in HOLDING) + len(starts)
        report.decisions = decisions
        return report

    def _blind(self, why: str) -> CycleReport:
        """A cycle whose applied configuration could not be read: the processes are watched
        (ended jobs recorded, stops honoured, as while no state is there), nothing is
        decided, and the serial last read stands (the same state back is no apply)."""
        report = CycleReport(self.store.last_cycle() + 1, self.serial or 0)
        report.unreadable, report.unreadable_news = why, why != self._unreadable
        self._unreadable = why
        records = self.reconcile(report)
        report.queued = sum(1 for r in records if r.status is Status.QUEUED)
        report.running = sum(1 for r in records if r.status in HOLDING)
        return report

    def _mark(
        self, config: AppliedConfig, records: Sequence[JobRecord], admitted: Sequence[JobRecord]
    ) -> None:
        """Tell the cloud which workers hold a job, so a shrink by apply takes idle ones
        first; written when it changes (and again after a failed write)."""
        if self.mark_workers is None:
            return
        workers = frozenset(w.id for pool in config.pools.values() for w in pool.workers)
        held = (job.worker for job in records if job.status in HOLDING)
        busy = frozenset(w for w in (*held, *(job.worker for job in admitted)) if w)
        if (workers, busy) != self._marked and self.mark_workers(workers, busy):
            self._marked = (workers, busy)

    def _start(
        self, job: JobRecord, directory: str | None, report: CycleReport
    ) -> Started | str | None:
        """Started; None when the job cannot start (it failed); the error, unrecorded, when
        this machine is short of what any start needs (SHORTAGES)."""
        launch = Launch(
            job.id,
            job.attempt,
            job.name,
            job.run,
            job_env(job, job.worker),
            Path(directory) if directory else None,
        )
        try:
            pid = self.executor.start(launch)
        except (OSError, ValueError) as error:  # ValueError: an env the OS refuses (stored
            # before job files were checked for it); the job fails, the loop goes on
            if isinstance(error, OSError) and error.errno in SHORTAGES:
                return _start_error(error)
            why = reason(ReasonCode.START_FAILED, error=_start_error(error))
            failed = Ending(Status.FAILED, why, None, job.retries_left)  # none used
            if self.store.ended([Ended(job.id, job.attempt, failed)], self.clock()):
                report.ended.append((job.id, Status.FAILED))
            return None
        return Started(job.id, job.attempt, pid, since=self._since(pid))


def _start_error(error: OSError | ValueError) -> str:
    """The error as a person reads it: `No such file or directory: /path`, never Python's
    `[Errno 2] ... PosixPath('/path')`."""
    if isinstance(error, OSError) and error.strerror:
        if error.filename is None:
            return error.strerror
        return f"{error.strerror}: {os.fsdecode(error.filename)}"
    return str(error)
