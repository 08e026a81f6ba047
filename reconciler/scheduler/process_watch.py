"""Step 1 of the loop's cycle: the processes of held jobs, reconciled with the store.

Ended ones release their capacity; stop requests past their grace period get SIGKILL;
attempts a dead scheduler left half-started are adopted or fenced and queued again; attempts
that run at another place, out of this executor's sight, are left as they are (running,
holding their capacity); a held job whose worker the applied configuration no longer has is
stopped as a preempted one is (reconciler.scheduler.loop runs it each cycle).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from reconciler.scheduler.cycle_report import CycleReport, LoopSettings
from reconciler.scheduler.executor import Executor, Observation, Phase, Placed, Process, Tracked
from reconciler.scheduler.lifecycle import (
    applied_workers,
    ending,
    interrupted,
    lost,
    removal,
    removing,
    runs_elsewhere,
    worker_gone,
    worker_removed,
)
from reconciler.scheduler.model import ACTIVE, HOLDING, AppliedConfig
from reconciler.scheduler.store import Ended, JobRecord, Removal, SchedulerStore, Started


class ProcessWatch:
    """The held jobs' processes as the executor sees them, and what the store records of
    them; what it signalled and reported, so each is done once per attempt."""

    def __init__(
        self,
        store: SchedulerStore,
        executor: Executor,
        clock: Callable[[], float],
        settings: LoopSettings,
        steady: Callable[[], float] | None,
    ):
        self.store = store
        # A clock that never jumps (time.monotonic), beside `clock`: see `_kill_due`.
        self.steady = steady
        self._kill_at: dict[tuple[int, int], float] = {}
        self.executor = executor
        self.clock = clock
        self.settings = settings
        self._signalled: set[tuple[int, int]] = set()  # (job, attempt) sent SIGTERM
        self.place = executor.place if isinstance(executor, Placed) else None
        self._told: set[tuple[int, int]] = set()  # (job, attempt) reported as elsewhere
        self._tracked = executor if isinstance(executor, Tracked) else None

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
