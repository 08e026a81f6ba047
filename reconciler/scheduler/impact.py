"""What an apply would do to the jobs: the notes a plan carries when it deletes, replaces or
shrinks what jobs run on or wait for. Pure: the state the plan was made from, the plan's
changes (as plain data: the scheduler never imports the planner) and the queue's active jobs.

The configuration after the apply is the scheduler's own reading (`applied_config`) of the
state with the plan's changes written in, so a queued job is judged by the same routing the
scheduler will use after the apply, not by rules kept twice.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reconciler.scheduler.amounts import show
from reconciler.scheduler.applied import applied_config, declared_workers
from reconciler.scheduler.model import HOLDING, AppliedConfig, JobRequest, Status
from reconciler.scheduler.reasons import Reason
from reconciler.scheduler.routing import resolve
from reconciler.scheduler.store import JobRecord
from state import ResourceRecord, StateSnapshot

# What the scheduler reads from state: a change to anything else leaves every job as it is.
SCHEDULED_KINDS = frozenset(
    {"resource_pool", "subject_policy", "worker_pool", "machine_type", "cluster"}
)
SHOWN_IDS = 10  # job ids listed in a note; the rest are counted


@dataclass(frozen=True)
class ObjectChange:
    """One planned change to an object the scheduler reads, as the plan states it."""

    address: str
    resource_type: str
    action: str  # "create", "update", "replace" or "delete"
    after: Mapping[str, Any] | None  # the desired attributes (None for a delete)


def jobs_affected(
    state: StateSnapshot, changes: Sequence[ObjectChange], jobs: Sequence[JobRecord]
) -> tuple[str, ...]:
    """One note per way the apply of `changes` would stop, strand or reject the active `jobs`
    (none when it leaves every job as it is)."""
    changes = [c for c in changes if c.resource_type in SCHEDULED_KINDS]
    if not changes or not jobs:
        return ()
    held = [j for j in jobs if j.status in HOLDING and j.pool]
    notes: list[str] = []
    for change in sorted(changes, key=lambda c: c.address):
        name = change.address.split(".", 1)[-1]
        if change.resource_type == "worker_pool":
            notes += _worker_pool_note(change, name, [j for j in held if j.pool == name])
        elif change.resource_type == "resource_pool" and change.action == "delete":
            on = [j for j in held if j.pool == name]
            if on:
                notes.append(
                    f"{change.address} is deleted with {_jobs(on)} running on it: they run on "
                    "to their end"
                )
        elif change.resource_type == "subject_policy" and change.action == "delete":
            under = [j for j in held if j.policy == name]
            if under:
                notes.append(
                    f"{change.address} is deleted with {_jobs(under)} running under it: they "
                    "run on to their end, holding what they hold of their pool"
                )
    after = applied_config(_state_after(state, changes))
    notes += _overcommitted(after, changes, held)
    notes += _rejected(applied_config(state), after, [j for j in jobs if j.status is Status.QUEUED])
    return tuple(notes)


def _worker_pool_note(change: ObjectChange, name: str, on: Sequence[JobRecord]) -> list[str]:
    if not on:
        return []
    if change.action in ("delete", "replace"):
        done = "deleted" if change.action == "delete" else "replaced (new workers)"
        return [
            f"{change.address} is {done} with {_jobs(on)} running on its workers: the "
            "scheduler stops them when their workers go"
        ]
    if change.action == "update" and change.after is not None:
        keep = declared_workers(change.after.get("pool") or {})
        busy = len({j.worker for j in on if j.worker} or {j.id for j in on})
        if keep < busy:
            return [
                f"{change.address} shrinks to {keep} worker(s) with {busy} busy ({_jobs(on)} "
                f"running): {busy - keep} busy worker(s) go, and the scheduler stops their jobs"
            ]
    return []


def _overcommitted(
    after: AppliedConfig, changes: Sequence[ObjectChange], held: Sequence[JobRecord]
) -> list[str]:
    """Resource pools the apply shrinks below what their running jobs hold: nothing is
    stopped; the pool admits nothing more until they drain (`overcommitted`)."""
    notes: list[str] = []
    for change in changes:
        name = change.address.split(".", 1)[-1]
        if change.resource_type != "resource_pool" or change.action == "delete":
            continue
        pool = after.pools.get(name)
        on = [j for j in held if j.pool == name]
        if pool is None or not on:
            continue
        used: dict[str, int] = {}
        for job in on:
            for key, amount in job.amounts:
                used[key] = used.get(key, 0) + amount
        over = [
            f"{show(key, used[key])} held, {show(key, capacity)} after"
            for key, capacity in sorted(pool.capacity.items())
            if used.get(key, 0) > capacity
        ]
        if over:
            notes.append(
                f"{change.address} shrinks below what its {_jobs(on)} running hold "
                f"({'; '.join(over)}): none is stopped, and the pool starts nothing new until "
                "they drain below it"
            )
    return notes


def _rejected(
    before: AppliedConfig, after: AppliedConfig, queued: Sequence[JobRecord]
) -> list[str]:
    """Queued jobs some route could run now and none could after the apply: the scheduler
    rejects them at its first cycle after it (README: fail fast, never pending forever)."""
    verdicts: dict[JobRequest, Reason | None] = {}
    rejected: dict[str, list[JobRecord]] = {}
    for job in queued:
        request = job.request
        if request not in verdicts:
            now = resolve(request, before)
            later = resolve(request, after)
            verdicts[request] = (
                later if isinstance(later, Reason) and not isinstance(now, Reason) else None
            )
        verdict = verdicts[request]
        if verdict is not None:
            rejected.setdefault(verdict.message, []).append(job)
    return [
        f"{_jobs(jobs, 'queued job')} would be rejected by the scheduler after this apply: "
        f"{message}"
        for message, jobs in sorted(rejected.items())
    ]


def _state_after(state: StateSnapshot, changes: Sequence[ObjectChange]) -> StateSnapshot:
    """The state with the changes written in, as far as the scheduler reads it: a delete
    removes the record; anything else records the desired attributes."""
    records = dict(state.resources)
    for change in changes:
        if change.action == "delete" or change.after is None:
            records.pop(change.address, None)
        else:
            records[change.address] = ResourceRecord(
                change.address, change.resource_type, dict(change.after)
            )
    return StateSnapshot.from_records(state.lineage, state.serial + 1, records.values())


def _jobs(jobs: Sequence[JobRecord], noun: str = "job") -> str:
    """`3 jobs (4, 5, 9)`; past SHOWN_IDS ids, the rest counted."""
    ids = sorted(job.id for job in jobs)
    shown = ", ".join(str(i) for i in ids[:SHOWN_IDS])
    more = f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
    return f"{len(ids)} {noun}{'' if len(ids) == 1 else 's'} ({shown}{more})"


__all__ = ["SCHEDULED_KINDS", "ObjectChange", "jobs_affected"]
