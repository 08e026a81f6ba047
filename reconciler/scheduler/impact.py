"""What an apply would do to the jobs: the notes a plan carries when it deletes, replaces or
shrinks what jobs run on or wait for. Pure: the state the plan was made from, the plan's
changes (as plain data: the scheduler never imports the planner) and the queue's active jobs.

The configuration after the apply is the scheduler's own reading (`applied_config`) of the
state with the plan's changes written in, so a queued job is judged by the same routing the
scheduler will use after the apply, not by rules kept twice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reconciler.scheduler.amounts import show, total
from reconciler.scheduler.applied import applied_config, declared_workers
from reconciler.scheduler.foresight import preemptions_caused
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
SHOWN_REASONS = 5  # rejection reasons given a note each; the rest are counted


@dataclass(frozen=True)
class ObjectChange:
    """One planned change to an object the scheduler reads, as the plan states it."""

    address: str
    resource_type: str
    action: str  # "create", "update", "replace" or "delete"
    after: Mapping[str, Any] | None  # the desired attributes (None for a delete)


def jobs_affected(
    state: StateSnapshot,
    changes: Sequence[ObjectChange],
    jobs: Sequence[JobRecord],
    now: float | None = None,
) -> tuple[str, ...]:
    """One note per way the apply of `changes` would stop, strand, preempt or reject the
    active `jobs` (none when it leaves every job as it is). `now`: the time the scheduler's
    next cycle is foreseen at (its claims expire by it); None foresees no preemption."""
    changes = sorted(
        (c for c in changes if c.resource_type in SCHEDULED_KINDS), key=lambda c: c.address
    )
    if not changes or not jobs:
        return ()
    held = [j for j in jobs if j.status in HOLDING and j.pool]
    before, after = applied_config(state), applied_config(_state_after(state, changes))
    notes: list[str] = []
    for name, pool in sorted(before.pools.items()):
        on = [j for j in held if j.pool == name]
        if name not in after.pools and pool.kind != "worker" and on:
            # Read off the configurations, not the changes: a machine pool's changes name its
            # machine types, never the pool (workers: per change, below).
            notes.append(
                f"{pool.kind}_pool.{name} is deleted with {_jobs(on)} running on it: they run "
                "on to their end"
            )
    for change in changes:
        name = change.address.split(".", 1)[-1]
        if change.resource_type == "worker_pool":
            on = [j for j in held if j.pool == name]
            notes += _worker_pool_note(change, name, on, (before, after))
        elif change.resource_type == "subject_policy" and change.action == "delete":
            under = [j for j in held if j.policy == name]
            if under:
                notes.append(
                    f"{change.address} is deleted with {_jobs(under)} running under it: they "
                    "run on to their end, holding what they hold of their pool"
                )
        elif change.resource_type == "subject_policy" and name in after.policies:
            moved = after.policies[name].pool
            left = [j for j in held if j.policy == name and j.pool != moved]
            if left:
                notes.append(
                    f"{change.address} moves to pool {moved} with {_jobs(left)} running under "
                    "it elsewhere: they run on to their end, holding what they hold of their "
                    f"pool, and count toward none of its bounds in {moved}"
                )
    notes += _overcommitted(before, after, changes, held)
    if now is not None:
        notes += _preempted(before, after, jobs, now)
    notes += _rejected(before, after, [j for j in jobs if j.status is Status.QUEUED])
    return tuple(notes)


def _preempted(
    before: AppliedConfig, after: AppliedConfig, jobs: Sequence[JobRecord], now: float
) -> list[str]:
    """Running jobs the scheduler's next cycle would preempt after the apply and not without
    it (foresight.py: the cycle decided on both configurations)."""
    by_id = {job.id: job for job in jobs}
    notes = []
    for caused in preemptions_caused(before, after, jobs, now):
        kind = after.pools[caused.pool].kind  # decided on `after`: its pool is there
        victims = [by_id[i] for i in caused.victims]
        takers = [by_id[i] for i in caused.preemptors]
        notes.append(
            f"after this apply the scheduler would preempt {_jobs(victims, 'running job')} on "
            f"{kind}_pool.{caused.pool} for {_jobs(takers, 'queued job')}: "
            + _WHY.get(caused.why, caused.why)
        )
    return notes


# Why victims are taken (`Preempt.why`), as a note says it.
_WHY = {
    "reclaim": "the queued jobs' policy takes back capacity it reserves",
    "priority": "the queued jobs have the higher priority",
}


def _worker_pool_note(
    change: ObjectChange,
    name: str,
    on: Sequence[JobRecord],
    configs: tuple[AppliedConfig, AppliedConfig],
) -> list[str]:
    if not on:
        return []
    if change.action == "replace" and (change.after or {}).get("provider", "local") != "local":
        # Workers of a cloud this machine cannot list are known by name only (`pool-0`...):
        # the new ones carry the old names, so the scheduler sees no worker go.
        return [
            f"{change.address} is replaced (new workers) with {_jobs(on)} running on its "
            "workers: the scheduler knows this cloud's workers by name only and leaves those "
            "jobs running (`jobs cancel` stops them)"
        ]
    before, after = configs
    if change.action in ("delete", "replace"):
        done = "deleted" if change.action == "delete" else "replaced (new workers)"
        return [
            f"{change.address} is {done} with {_jobs(on)} running on its workers: the "
            "scheduler stops them and queues them again (worker_removed, no retry used)"
            + _then_rejected(on, after)
        ]
    if change.action != "update" or change.after is None:
        return []
    keep = declared_workers(change.after.get("pool") or {})
    notes = []
    # Workers the scheduler knows by name only (a cloud this machine does not reach: w-0,
    # w-1, ...): the shrunk pool names fewer, and a job on a name it drops is stopped
    # (lifecycle.worker_gone), however many workers are busy.
    named = {w.id for w in before.pools[name].workers} if name in before.pools else set()
    kept = {w.id for w in after.pools[name].workers} if name in after.pools else set()
    dropped = [j for j in on if j.worker in named and j.worker not in kept]
    if dropped:
        notes.append(
            f"{change.address} shrinks to {keep} worker(s): "
            f"{len({j.worker for j in dropped})} busy worker(s) go ({_jobs(dropped)} running "
            "there), and the scheduler stops their jobs and queues them again"
        )
    # Local workers (instance ids): the local cloud terminates idle ones first.
    local = [j for j in on if j.worker not in named]
    busy = len({j.worker for j in local if j.worker} or {j.id for j in local})
    if local and keep < busy:
        notes.append(
            f"{change.address} shrinks to {keep} worker(s) with {busy} busy ({_jobs(local)} "
            f"running): {busy - keep} busy worker(s) go, and the scheduler stops their "
            "jobs and queues them again"
        )
    return notes


def _overcommitted(
    before: AppliedConfig,
    after: AppliedConfig,
    changes: Sequence[ObjectChange],
    held: Sequence[JobRecord],
) -> list[str]:
    """Pools shrunk below what their running jobs hold, policies whose limit (or, for
    non-preemptible work, reservation) drops below what theirs hold: nothing is stopped for
    it; what is over starts no job that asks for the keys over until it drains (`overcommitted`,
    `policy_limit_reached`, `reservation_full`: a job asking for none of them still starts, as
    fit.py decides). Only what this apply pushes over is named."""
    notes: list[str] = []
    for name, now in sorted(before.pools.items()):
        later = after.pools.get(name)
        on = [j for j in held if j.pool == name]
        if later is None or now.kind == "worker" or later.capacity == now.capacity or not on:
            continue  # gone (noted), workers (by worker), unchanged, or idle
        notes += _drop_note(
            f"{now.kind}_pool.{name} shrinks below what",
            on,
            (now.capacity, later.capacity, _pool_default),
            "the pool starts no job",
        )
    for change in changes:
        name = change.address.split(".", 1)[-1]
        old, new = before.policies.get(name), after.policies.get(name)
        # Only its jobs in the pool it has after the apply count toward its bounds there.
        under = [j for j in held if j.policy == name and new is not None and j.pool == new.pool]
        if change.resource_type != "subject_policy" or old is None or new is None or not under:
            continue
        notes += _drop_note(
            f"{change.address}'s limit drops below what",
            under,
            (old.limit, new.limit, _unbounded),
            "it starts no job",
            where=" under it",
        )
        notes += _drop_note(
            f"{change.address}'s reservation drops below what",
            [j for j in under if not j.request.preemptible],
            (old.reserved, new.reserved, _nothing),
            "it starts no non-preemptible job",
            noun="running non-preemptible job",
            where=" under it",
        )
    return notes


Bounds = tuple[Mapping[str, int] | None, Mapping[str, int] | None, Callable[[str], int | None]]


def _drop_note(
    head: str,
    jobs: Sequence[JobRecord],
    bounds: Bounds,
    stops: str,
    noun: str = "running job",
    where: str = "",
) -> list[str]:
    """A note when the apply's new bound is below what `jobs` hold, where the old one was not:
    `bounds` is (before, after, the bound of a key they do not name)."""
    over = _newly_over(total(j.amounts for j in jobs), *bounds) if jobs else {}
    if not over:
        return []
    keys = " or ".join(over)
    return [
        f"{head} {_hold(jobs, noun)}{where} ({'; '.join(over.values())}): none is stopped, "
        f"and {stops} that asks for {keys} until they drain below it"
    ]


def _pool_default(key: str) -> int | None:
    """A key a pool does not declare: cpu and memory are unbounded, any other has none."""
    return None if key in ("cpu", "memory") else 0


def _unbounded(key: str) -> int | None:
    return None


def _nothing(key: str) -> int | None:
    return 0


def _newly_over(
    used: Mapping[str, int],
    before: Mapping[str, int] | None,
    after: Mapping[str, int] | None,
    missing: Callable[[str], int | None],
) -> dict[str, str]:
    """The keys where `used` is within `before` and past `after`, each as `gpu 6 held, gpu 4
    after`; a key a bound does not name is bounded by `missing(key)` (None: unbounded), and
    so is every key where the bounds are None."""

    def bound(bounds: Mapping[str, int] | None, key: str) -> int | None:
        if bounds is None:
            return None
        return bounds[key] if key in bounds else missing(key)

    over = {}
    for key, amount in sorted(used.items()):
        old, new = bound(before, key), bound(after, key)
        if new is not None and amount > new and (old is None or amount <= old):
            over[key] = f"{show(key, amount)} held, {show(key, new)} after"
    return over


def _then_rejected(stopped: Sequence[JobRecord], after: AppliedConfig) -> str:
    """What follows the stop of jobs no route can run after the apply (their pool deleted):
    queued again, they are rejected at the scheduler's next cycle, not run again."""
    verdicts = [(job, resolve(job.request, after)) for job in stopped]
    rejected = [(job, verdict) for job, verdict in verdicts if isinstance(verdict, Reason)]
    if not rejected:
        return ""
    which = "them" if len(rejected) == len(stopped) else _jobs([j for j, _ in rejected])
    return f", then rejects {which}: {rejected[0][1].message}"


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
    # The most common reasons first; past SHOWN_REASONS of them, the rest counted in one note.
    ranked = sorted(rejected.items(), key=lambda item: (-len(item[1]), item[0]))
    notes = [
        f"{_jobs(jobs, 'queued job')} would be rejected by the scheduler after this apply: "
        f"{message}"
        for message, jobs in ranked[:SHOWN_REASONS]
    ]
    rest = [job for _, jobs in ranked[SHOWN_REASONS:] for job in jobs]
    if rest:
        notes.append(
            f"{_jobs(rest, 'more queued job')} would be rejected too, for "
            f"{len(ranked) - SHOWN_REASONS} other reason(s)"
        )
    return notes


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


def _hold(jobs: Sequence[JobRecord], noun: str) -> str:
    """`2 running jobs (10, 11) hold`, `1 running job (10) holds`."""
    return f"{_jobs(jobs, noun)} {'holds' if len(jobs) == 1 else 'hold'}"


def _jobs(jobs: Sequence[JobRecord], noun: str = "job") -> str:
    """`3 jobs (4, 5, 9)`; past SHOWN_IDS ids, the rest counted."""
    ids = sorted(job.id for job in jobs)
    shown = ", ".join(str(i) for i in ids[:SHOWN_IDS])
    more = f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
    return f"{len(ids)} {noun}{'' if len(ids) == 1 else 's'} ({shown}{more})"


__all__ = ["SCHEDULED_KINDS", "ObjectChange", "jobs_affected"]
