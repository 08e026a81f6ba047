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

import errno
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reconciler.errors import PoolformError
from reconciler.scheduler.executor import (
    Executor,
    Launch,
    Observation,
    Phase,
    Placed,
    Process,
    Tracked,
)
from reconciler.scheduler.lifecycle import (
    applied_workers,
    deferred,
    ending,
    interrupted,
    job_env,
    lost,
    removal,
    removing,
    runs_elsewhere,
    snapshot_of,
    worker_gone,
    worker_removed,
)
from reconciler.scheduler.model import ACTIVE, HOLDING, AppliedConfig, Decisions, Status
from reconciler.scheduler.reasons import ReasonCode, reason
from reconciler.scheduler.schedule import schedule
from reconciler.scheduler.store import (
    Ended,
    Ending,
    JobRecord,
    Removal,
    SchedulerStore,
    Started,
)


class InputUnreadable(PoolformError):
    """The applied state or the local cloud's workers are there but cannot be read now (a
    backup copied over a database, a half-written file, a server restarting). The loop goes
    on watching its jobs' processes and reads again next cycle; a job command stops."""


# (every worker of the applied worker pools, the busy ones) -> whether the marks were written
MarkWorkers = Callable[[frozenset[str], frozenset[str]], bool]


@dataclass(frozen=True)
class LoopSettings:
    grace: float = 30.0  # seconds between SIGTERM and SIGKILL
    claim_ttl: float | None = None  # how long a preemptor's claim lasts (default grace + 60s)
    max_bypass: int = 8  # admissions that may pass a waiting job before room is held for it
    # Jobs running at once at most: a pool without step_run admits every job that asks for
    # nothing it counts, and each is a process (a queue of 100,000 such jobs would fork until
    # the machine's process table is full). None: no bound (an executor with no processes).
    max_running: int | None = 256

    @property
    def claim_seconds(self) -> float:
        return self.grace + 60.0 if self.claim_ttl is None else self.claim_ttl


# A start refused for one of these is this machine's shortage (room on the disk of the jobs
# directory, processes, open files, memory), not the job's: the job waits in the queue, no
# retry used, and the loop starts nothing for SHORTAGE_PAUSE seconds (it still watches the
# running jobs): the next job would meet the same shortage, and failing them all would fail
# the whole queue for one job's runaway log.
SHORTAGES = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EAGAIN, errno.ENOMEM, errno.EMFILE, errno.ENFILE}
)
SHORTAGE_PAUSE = 10.0


@dataclass
class CycleReport:
    cycle: int
    serial: int
    serial_moved: bool = False
    ended: list[tuple[int, Status]] = field(default_factory=list)
    admitted: list[int] = field(default_factory=list)
    preempted: list[int] = field(default_factory=list)
    rejected: list[int] = field(default_factory=list)
    killed: list[int] = field(default_factory=list)
    # Held jobs first found on a worker an apply removed: sent SIGTERM this cycle.
    removed: list[int] = field(default_factory=list)
    no_state: bool = False  # no applied state was found: nothing was decided
    # Why the applied configuration could not be read this cycle (nothing was decided), and
    # whether that is news (first cycle so, or another reason), or that it is readable again.
    unreadable: str | None = None
    unreadable_news: bool = False
    readable_again: bool = False
    queued: int = 0
    running: int = 0
    decisions: Decisions | None = None
    # Held jobs whose attempts run at another place (left alone), and those first seen there
    # by this scheduler (to say so once).
    elsewhere: list[JobRecord] = field(default_factory=list)
    newly_elsewhere: list[JobRecord] = field(default_factory=list)
    # Admitted jobs queued again unstarted (SHORTAGES), and the shortage: set in the cycle
    # that met it, and in those that pause after it (`deferred` empty there).
    deferred: list[int] = field(default_factory=list)
    shortage: str | None = None

    @property
    def eventful(self) -> bool:
        return bool(
            self.serial_moved
            or self.ended
            or self.admitted
            or self.preempted
            or self.rejected
            or self.killed
            or self.removed
            or self.deferred
        )


class SchedulerLoop:
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
        self.store = store
        # A clock that never jumps (time.monotonic), beside `clock`: see `_kill_due`.
        self.steady = steady
        self._kill_at: dict[tuple[int, int], float] = {}
        self.mark_workers = mark_workers
        self._marked: tuple[frozenset[str], frozenset[str]] | None = None
        self.executor = executor
        self.read_config = read_config
        self.clock = clock
        self.settings = settings or LoopSettings()
        self.serial: int | None = None
        self._signalled: set[tuple[int, int]] = set()  # (job, attempt) sent SIGTERM
        self.place = executor.place if isinstance(executor, Placed) else None
        self._told: set[tuple[int, int]] = set()  # (job, attempt) reported as elsewhere
        self._tracked = executor if isinstance(executor, Tracked) else None
        self._unreadable: str | None = None  # why the last cycle could not read its inputs
        self._shortage: tuple[str, float] | None = None  # the last start's shortage, and when

    def _observe(self, job: JobRecord) -> Observation:
        """The attempt as the executor sees it, given the process the store recorded for it
        (where the executor takes it: a job cannot hide its running process from it)."""
        if self._tracked is None:
            return self.executor.observe(job.id, job.attempt, fence=True)
        process = None if job.pid is None else Process(job.pid, job.pid_start)
        return self._tracked.observe(job.id, job.attempt, fence=True, process=process)

    def _since(self, pid: int) -> int | None:
        return None if self._tracked is None else self._tracked.identify(pid).since

    # -- 1. processes ------------------------------------------------------------------------

    def reconcile(
        self,
        report: CycleReport,
        *,
        own_only: bool = False,
        config: AppliedConfig | None = None,
    ) -> list[JobRecord]:
        """Look at every held job's process; returns the active jobs as they are afterwards.
        `own_only`: only attempts recorded at this loop's place (a standby's watch, while a
        leader elsewhere leaves them alone). `config`: the applied configuration, whose
        workers tell which held jobs lost theirs (None: none is judged so)."""
        workers = None if config is None else applied_workers(config)
        serial = 0 if config is None else config.serial
        records = self.store.jobs(active=True)
        endings: list[Ended] = []
        adopted: list[Started] = []
        removals: dict[int, tuple[Removal, int]] = {}  # job -> (its stop, its pid)
        for job in records:
            if job.status not in HOLDING:
                continue
            if own_only and (
                self.place is None or job.place is None or runs_elsewhere(job, self.place)
            ):
                continue
            if runs_elsewhere(job, self.place):
                # Its claim, pid and exit file are at its place: what looks absent here may
                # run there. Never fenced, queued again or signalled from here; a scheduler
                # there records it, or an operator says it is gone (jobs cancel --gone).
                report.elsewhere.append(job)
                if (job.id, job.attempt) not in self._told:
                    self._told.add((job.id, job.attempt))
                    report.newly_elsewhere.append(job)
                continue
            # Fence: an attempt no process has claimed yet never will, so a slow or lost
            # launch can be queued again without ever running twice.
            seen = self._observe(job)
            # Once being stopped for it, a worker that shows up again changes nothing.
            gone = removing(job) or worker_gone(job, workers)
            if seen.phase is Phase.NOT_STARTED:
                fenced = job.stop is None and gone
                result = worker_removed(job, None, serial) if fenced else interrupted(job)
                endings.append(Ended(job.id, job.attempt, result))
            elif seen.phase is Phase.EXITED:
                if job.pid is not None and (job.stop is not None or removing(job)):
                    # Asked to stop, it ended, but what it started in its process group may
                    # ignore SIGTERM (a daemon holding the GPU): the whole group was asked to
                    # stop, and its capacity is released now, so the rest is killed now.
                    self.executor.signal(job.id, job.attempt, job.pid, kill=True)
                code = seen.exit_code
                result = worker_removed(job, code, serial) if gone else ending(job, code)
                endings.append(Ended(job.id, job.attempt, result))
            elif seen.phase is Phase.VANISHED:
                stopped = job.killed or job.stop is not None
                result = ending(job, None) if stopped else lost(job)
                if gone:  # whatever ended it (our SIGKILL, the cloud's sweep): not its fault
                    result = worker_removed(job, None, serial)
                endings.append(Ended(job.id, job.attempt, result))
            elif seen.pid is not None:
                if job.pid != seen.pid:
                    since = self._since(seen.pid)
                    adopted.append(Started(job.id, job.attempt, seen.pid, True, since))
                if job.stop is not None or removing(job):
                    self._stop(job, seen.pid, report)
                elif gone:
                    removals[job.id] = (
                        Removal(job.id, job.attempt, removal(job, serial)),
                        seen.pid,
                    )
        self._stop_removed(removals, report)
        self.store.started(adopted, self.clock())
        done = set(self.store.ended(endings, self.clock()))
        report.ended += [(e.job, e.ending.status) for e in endings if e.job in done]
        touched = {e.job for e in endings} | {a.job for a in adopted} | set(report.killed)
        touched |= set(report.removed)
        if touched:
            # Read back only the rows this look wrote (ended, adopted, killed): a deep queue's
            # other rows are as read a moment ago (a change made since, by a submit or a
            # cancel, is the next cycle's, as one made just after the first read would be).
            fresh = {job.id: job for job in self.store.jobs(ids=touched)}
            records = [fresh.get(job.id, job) for job in records]
            records = [job for job in records if job.status in ACTIVE]
            away = {job.id for job in report.elsewhere}
            report.elsewhere = [job for job in records if job.id in away]
        return records

    def _stop(self, job: JobRecord, pid: int, report: CycleReport) -> None:
        key = (job.id, job.attempt)
        if key not in self._signalled:
            self.executor.signal(job.id, job.attempt, pid, kill=False)
            self._signalled.add(key)
        deadline = job.stop_deadline
        if not job.killed and deadline is not None and self._kill_due(key, deadline):
            self._kill_at.pop(key, None)
            self.executor.signal(job.id, job.attempt, pid, kill=True)
            self.store.killed(job.id, self.clock())
            report.killed.append(job.id)

    def _kill_due(self, key: tuple[int, int], deadline: float) -> bool:
        """Whether a stopping job's SIGKILL deadline (wall time: recorded, so a restarted
        scheduler keeps it) has come. A wall clock set back (an NTP step on a VM that ran
        ahead) would push it away by as much, and a job that ignores SIGTERM would hold its
        capacity that long: the grace left when this loop first saw the stop is also counted
        on the steady clock, and the earlier of the two ends it."""
        now = self.clock()
        if now >= deadline:
            return True
        if self.steady is None:
            return False
        steady = self.steady()
        due = self._kill_at.setdefault(key, steady + (deadline - now))
        return steady >= due

    def _stop_removed(
        self, removals: Mapping[int, tuple[Removal, int]], report: CycleReport
    ) -> None:
        """Stop the jobs whose workers an apply removed, as a preemption does: recorded first
        (why, and the SIGKILL deadline `_stop` keeps from then on, also after a restart), then
        SIGTERM to each one's process group. Its end is recorded by a later look, so it is
        queued again only once its process has ended."""
        stops = [stop for stop, _ in removals.values()]
        for job in self.store.workers_gone(stops, self.clock(), self.settings.grace):
            stop, pid = removals[job]
            self.executor.signal(job, stop.attempt, pid, kill=False)
            self._signalled.add((job, stop.attempt))
            report.removed.append(job)

    # -- 2-4. decide, commit, act ------------------------------------------------------------

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
