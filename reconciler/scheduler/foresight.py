"""The running jobs an apply would have the scheduler preempt: its next cycle decided over the
queue as it is, once on the configuration applied now and once on the one the apply leaves.
A victim of the second that is none of the first is the apply's doing: a reservation raised
(its owner takes back what others borrow), lowered (its jobs now borrow, and may be taken),
a priority or a limit moved. Pure: two runs of `schedule`, with the loop's default settings.

A forecast, not a promise: the plan cannot know the settings the scheduler runs with
(`--max-running` full stops every start, preemptions included) nor which host's scheduler
leads (a job running on another host is no victim of it), so it decides as a scheduler with
the default settings that can signal every job would.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reconciler.scheduler.lifecycle import snapshot_of
from reconciler.scheduler.loop import LoopSettings
from reconciler.scheduler.model import AppliedConfig, Preempt, Status
from reconciler.scheduler.schedule import schedule
from reconciler.scheduler.store import JobRecord


@dataclass(frozen=True)
class Caused:
    """Preemptions the apply would cause on one pool, for one reason (`Preempt.why`)."""

    pool: str
    why: str  # "reclaim" or "priority"
    victims: tuple[int, ...]
    preemptors: tuple[int, ...]


def preemptions_caused(
    before: AppliedConfig, after: AppliedConfig, jobs: Sequence[JobRecord], now: float
) -> list[Caused]:
    """Per pool and reason, the preemptions the scheduler's next cycle would decide after the
    apply and not without it (none when the queue gives it no cause)."""
    if not any(job.status is Status.QUEUED for job in jobs):
        return []
    anyway = {victim for p in _preempts(before, jobs, now) for victim in p.victims}
    caused: dict[tuple[str, str], tuple[set[int], set[int]]] = {}
    for preempt in _preempts(after, jobs, now):
        victims = [v for v in preempt.victims if v not in anyway]
        if victims:
            taken, takers = caused.setdefault((preempt.pool, preempt.why), (set(), set()))
            taken.update(victims)
            takers.add(preempt.preemptor)
    return [
        Caused(pool, why, tuple(sorted(taken)), tuple(sorted(takers)))
        for (pool, why), (taken, takers) in sorted(caused.items())
    ]


def _preempts(config: AppliedConfig, jobs: Sequence[JobRecord], now: float) -> tuple[Preempt, ...]:
    settings = LoopSettings()
    snapshot = snapshot_of(
        config, jobs, 1, settings.claim_seconds, settings.max_bypass, settings.max_running
    )
    return schedule(snapshot, now).preempts


__all__ = ["Caused", "preemptions_caused"]
