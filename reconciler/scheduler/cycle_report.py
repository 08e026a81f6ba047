"""What the scheduler loop is told and tells: its settings, the report of one cycle, and the
shortages that pause its starts (reconciler.scheduler.loop)."""

from __future__ import annotations

import errno
from collections.abc import Callable
from dataclasses import dataclass, field

from reconciler.errors import PoolformError
from reconciler.scheduler.model import Decisions, Status
from reconciler.scheduler.store import JobRecord


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
