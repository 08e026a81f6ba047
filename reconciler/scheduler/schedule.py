"""`schedule(snapshot, now) -> Decisions`: one decision cycle, a pure function.

The cycle runs in numbered phases, as Kueue's does, but admits everything that fits from one
snapshot instead of one head per queue:

1. Routes (queue_routes.py): resolve every queued job against the applied configuration; a
   job no route could ever hold is rejected (after an apply made it impossible, the reason
   says so); a job whose route an apply moved to another pool is reported with the pool it
   waits for now.
2. Ledger: account what running, admitted and stopping jobs hold.
3. Order: jobs room is held for first (jobs passed too often, then claimants, whose victims
   are exiting), then priority (higher first), then submission time, then id, so the same
   snapshot always gives the same decisions.
4. Admit: each job in order takes the first route that fits now, accounted at once so the
   next job sees it. A job that fits nowhere looks for a minimal set of victims; if it finds
   one it claims the capacity they hold. A job passed by too many admissions has what is free
   of its demand held for it (see starvation.py).
5. Reasons: every job left queued gets a reason computed in this cycle.

What keeps a deep queue cheap without changing any decision (see admission.py): outcomes are
reused while the ledger they depend on stands (a job like one that just failed fails the same
way), and a tree of pools that nothing queued can enter any more, nor free by preemption, is
known as such, so the rest of its queue only needs reasons.
"""

from __future__ import annotations

import gc
from dataclasses import replace
from operator import attrgetter, itemgetter

from reconciler.scheduler.admission import Admission, Waiting
from reconciler.scheduler.candidates import Candidates, victim_order
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Decisions, Holding, Snapshot
from reconciler.scheduler.queue_routes import queue_routes
from reconciler.scheduler.reasons import BYPASSED, Reason
from reconciler.scheduler.usage import TreeUse
from reconciler.scheduler.waiting import explain_failure

__all__ = ["explain_failure", "schedule", "where_they_run"]


def schedule(snapshot: Snapshot, now: float) -> Decisions:
    """A cycle allocates many small objects and frees them by reference counting; the cyclic
    collector, set off by the allocations, would walk the whole snapshot again and again
    (about half a busy cycle's time, measured), so it is off while the cycle runs. At the end
    only the young generation (what the cycle made and returns) is collected: re-enabled with
    the allocation count high, the collector would set off at once and could cascade into a
    pass over every older object of the process (65 ms on the bench's heap, measured, a third
    of a busy cycle), work that belongs to the process, not to this decision. The older
    generations are left to the caller's next automatic collection."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _schedule(snapshot, now)
    finally:
        if was_enabled:
            gc.collect(0)
            gc.enable()


def _schedule(snapshot: Snapshot, now: float) -> Decisions:
    snapshot = where_they_run(snapshot)
    config = snapshot.config
    # 2. Ledger (first: phase 1 looks its entries up once per distinct set of routes).
    ledger = Ledger(config, snapshot.holding)
    # 1. Routes.
    moves: dict[int, str] = {}
    priorities: dict[int, int] = {}
    rejects, waiting = queue_routes(snapshot, ledger, now, moves, priorities)
    candidates, outstanding = _candidates(snapshot, ledger)
    # 3. Order: jobs passed too often, claimants, the rest; then priority, submission, id.
    waiting = _in_order(waiting)
    # 4. Admit (or preempt), and 5. reasons.
    admission = Admission(snapshot, ledger, candidates, outstanding, now)
    admission.run(waiting)
    bypassed = admission.bypasses.counts()
    _carry_bypass_counts(snapshot, admission.reasons, bypassed)
    return Decisions(
        cycle=snapshot.cycle,
        serial=config.serial,
        admits=tuple(admission.admits),
        preempts=tuple(admission.preempts),
        rejects=tuple(sorted(rejects, key=lambda r: r.job)),
        reasons=admission.reasons,
        claims=admission.claims,
        bypassed=bypassed,
        moves=moves,
        priorities=priorities,
    )


def where_they_run(snapshot: Snapshot) -> Snapshot:
    """Held jobs whose policy an apply has since moved to another pool hold what they hold
    of the pool they run in, under no policy of it, as jobs of a removed policy do: the
    policy's limit and reservation are of its new pool, which they do not use (Kueue's
    quota is per ClusterQueue), and `pools status` shows them there so. Counted under the
    policy, they would keep its jobs out of the new pool while it stands idle."""
    policies = snapshot.config.policies
    moved = False
    for held in snapshot.holding:
        policy = policies.get(held.policy)
        if policy is not None and policy.pool != held.pool:
            moved = True
            break
    if not moved:
        return snapshot
    holding = []
    for held in snapshot.holding:
        policy = policies.get(held.policy)
        if policy is not None and policy.pool != held.pool:
            # No policy is named so ('@' is in no name): an entry of its own in the ledger.
            held = replace(held, policy=f"{held.policy}@{held.pool}")
        holding.append(held)
    return replace(snapshot, holding=tuple(holding))


def _candidates(
    snapshot: Snapshot, ledger: Ledger
) -> tuple[dict[int, Candidates], dict[int, list[int]]]:
    """Per tree, its would-be victims (preemptible, not stopping) in victim order; per waiter,
    the jobs being stopped for it."""
    by_pool: dict[str, list[Holding]] = {}
    outstanding: dict[int, list[int]] = {}
    for held in _in_victim_order(snapshot.holding):
        if held.stopping:
            if held.preempted_for is not None:
                outstanding.setdefault(held.preempted_for, []).append(held.id)
        elif held.preemptible:
            found = by_pool.get(held.pool)
            if found is None:
                by_pool[held.pool] = [held]
            else:
                found.append(held)
    ranked: dict[int, tuple[TreeUse, list[Holding]]] = {}
    pools = ledger.pools
    for name, jobs in by_pool.items():
        use = pools.get(name)
        if use is None:
            continue
        tree = use.tree
        shared = ranked.get(id(tree))
        if shared is None:
            ranked[id(tree)] = (tree, jobs)
        else:  # pools sharing a tree: their jobs in one victim order (a total order)
            shared[1].extend(jobs)
            shared[1].sort(key=victim_order)
    candidates = {key: Candidates(ledger, jobs, tree) for key, (tree, jobs) in ranked.items()}
    return candidates, outstanding


def _in_victim_order(holding: tuple[Holding, ...]) -> list[Holding]:
    """Sorted by `victim_order` (lowest priority, then most recently admitted, then highest
    id), as three stable sorts on one field each, least significant first: no Python call
    per job."""
    ordered = sorted(holding, key=attrgetter("id"), reverse=True)
    ordered.sort(key=attrgetter("admitted_at"), reverse=True)
    ordered.sort(key=attrgetter("priority"))
    return ordered


def _carry_bypass_counts(
    snapshot: Snapshot, reasons: dict[int, Reason], changed: dict[int, int]
) -> None:
    """A waiting job's bypass count rides in its reason, which the store keeps from cycle to
    cycle (`snapshot_of` reads it back): the bound holds across cycles and restarts."""
    for job_id, count in changed.items():  # counts this cycle moved
        why = reasons.get(job_id)
        if count and why is not None:
            reasons[job_id] = Reason(why.code, {**why.detail, BYPASSED: count})
    for job in snapshot.queued:  # counts as stored
        if job.bypassed and job.id not in changed:
            why = reasons.get(job.id)
            if why is not None:
                reasons[job.id] = Reason(why.code, {**why.detail, BYPASSED: job.bypassed})


def _in_order(waiting: list[Waiting]) -> list[Waiting]:
    """Sorted by place in the order. A run of alike jobs is sorted as one entry, its first
    job's place, when no other job falls between its first and last (they share everything
    the order looks at but the id, which only grows along the run); else every job alone."""
    _sort(waiting)
    if not any(map(_RUN, waiting)):  # no run of alike jobs: every entry is one job already
        return waiting
    previous: Waiting | None = None
    for entry in waiting:
        if (
            previous is not None
            and previous[8]
            and entry[:3] == previous[:3]
            and entry[3] < previous[8][-1].id
        ):
            return _one_by_one(waiting)
        previous = entry
    return waiting


_RUN = itemgetter(8)


def _sort(waiting: list[Waiting]) -> None:
    """By (place, rank, submitted at, id), as four stable sorts on one plain field each, least
    significant first (ids are unique: the same order as sorting by the four together), which
    compare numbers instead of tuples."""
    for field in (3, 2, 1, 0):
        waiting.sort(key=itemgetter(field))


def _one_by_one(waiting: list[Waiting]) -> list[Waiting]:
    alone: list[Waiting] = []
    for place, rank, at, job_id, job, lanes, shape, claimant, run in waiting:
        alone.append((place, rank, at, job_id, job, lanes, shape, claimant, ()))
        for member in run:
            alone.append((place, rank, at, member.id, member, lanes, shape, claimant, ()))
    _sort(alone)
    return alone
