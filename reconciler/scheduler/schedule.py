"""`schedule(snapshot, now) -> Decisions`: one decision cycle, a pure function.

The cycle runs in numbered phases, as Kueue's does, but admits everything that fits from one
snapshot instead of one head per queue:

1. Routes: resolve every queued job against the applied configuration; a job no route could
   ever hold is rejected (after an apply made it impossible, the reason says so).
2. Ledger: account what running, admitted and stopping jobs hold.
3. Order: claimants first (jobs whose victims are exiting), then priority (higher first), then
   submission time, then id, so the same snapshot always gives the same decisions.
4. Admit: each job in order takes the first route that fits now, accounted at once so the
   next job sees it. A job that fits nowhere looks for a minimal set of victims; if it finds
   one it claims the capacity they hold.
5. Reasons: every job left queued gets a reason computed in this cycle.
"""

from __future__ import annotations

import itertools
from operator import itemgetter

from reconciler.scheduler.amounts import STEP_RUN, WORKER, Amounts
from reconciler.scheduler.ledger import Failure, Ledger
from reconciler.scheduler.model import (
    Admit,
    Decisions,
    Holding,
    Preempt,
    Queued,
    Reject,
    Route,
    Snapshot,
)
from reconciler.scheduler.preemption import victim_order, victims_among
from reconciler.scheduler.reasons import Reason, ReasonCode, reason
from reconciler.scheduler.routing import resolve


def schedule(snapshot: Snapshot, now: float) -> Decisions:
    config = snapshot.config
    # 1. Routes. A batch's ranks share one request object: look it up by identity first.
    rejects: list[Reject] = []
    resolved = config.resolved  # per configuration: the same request always routes the same
    by_identity: dict[int, tuple[Route, ...] | Reason] = {}
    # Routes that differ only in priority share a shape (pools, policies, demand): an int.
    shape_of: dict[int, int] = {}
    shape_ids: dict[tuple[tuple[str, str, Amounts], ...], int] = {}
    when = f" since the apply of state serial {config.serial}"
    waiting: list[tuple[tuple[bool, int, float, int], Queued, tuple[Route, ...], bool]] = []
    for job in snapshot.queued:
        found = by_identity.get(id(job.request))
        if found is None:
            found = resolved.get(job.request)
            if found is None:
                found = resolved[job.request] = resolve(job.request, config, when=when)
            by_identity[id(job.request)] = found
        if isinstance(found, Reason):
            rejects.append(Reject(job.id, found))
            continue
        if id(found) not in shape_of:
            shape = tuple((r.pool, r.policy, r.demand) for r in found)
            shape_of[id(found)] = shape_ids.setdefault(shape, len(shape_ids))
        is_claimant = job.claim_until is not None and job.claim_until > now
        order = (not is_claimant, -found[0].priority, job.submitted_at, job.id)
        waiting.append((order, job, found, is_claimant))

    # 2. Ledger.
    ledger = Ledger(config, snapshot.holding)
    on_pool: dict[str, list[Holding]] = {}  # would-be victims, each pool's in victim order
    outstanding: dict[int, list[int]] = {}
    for held in sorted(snapshot.holding, key=victim_order):
        if held.preemptible and not held.stopping:
            on_pool.setdefault(held.pool, []).append(held)
        if held.stopping and held.preempted_for is not None:
            outstanding.setdefault(held.preempted_for, []).append(held.id)
    holding_batches = {held.batch for held in snapshot.holding}

    # 3. Order: claimants, then priority, then submission time, then id.
    waiting.sort(key=itemgetter(0))

    # 4. Admit (or preempt).
    admits: list[Admit] = []
    preempts: list[Preempt] = []
    reasons: dict[int, Reason] = {}
    claims: dict[int, float] = {}
    # A job like one that just failed (same pools, policies and demand, preemptibility and
    # batch rule, no higher priority) fails the same way while the ledger has not changed
    # since: fits do not depend on priority, and a lower priority finds no more victims. Reuse
    # that outcome: a cycle over a deep queue of look-alike jobs stays linear, and no decision
    # changes.
    failed: dict[tuple[int, bool, int], tuple[object, int, Reason]] = {}
    hopeless: Hopeless = {}
    versions = ledger.versions
    for _, job, job_routes, is_claimant in waiting:
        np = not job.request.preemptible
        first = job_routes[0]
        look_alike = (
            shape_of[id(job_routes)],
            np,
            job.batch if job.batch in holding_batches else 0,
        )
        if len(job_routes) == 1:
            version: object = versions[first.pool]
        else:
            version = tuple(versions[r.pool] for r in job_routes)
        seen = None if is_claimant else failed.get(look_alike)
        if seen is not None and seen[0] == version and _same_outcome(seen, first.priority):
            reasons[job.id] = seen[2]
            continue
        failures: list[tuple[Route, Failure]] = []
        for route in job_routes:
            failure = ledger.check(route, np)
            if failure is None:
                worker = ledger.admit(job.id, route, np)
                admits.append(
                    Admit(job.id, route.pool, route.policy, route.demand, route.priority, worker)
                )
                break
            failures.append((route, failure))
        else:
            victims = outstanding.get(job.id)
            if victims and is_claimant:
                route, failure = failures[0]
                _hold(ledger, job.id, route, failure)
                reasons[job.id] = reason(
                    ReasonCode.WAITING_FOR_VICTIMS, victims=sorted(victims), pool=route.pool
                )
                continue
            preempted = _preempt(job, failures, ledger, on_pool, hopeless, holding_batches)
            if preempted is not None:
                preempts.append(preempted)
                claims[job.id] = now + snapshot.claim_ttl
                route, failure = next(f for f in failures if f[0].pool == preempted.pool)
                _hold(ledger, job.id, route, failure)
                reasons[job.id] = reason(
                    ReasonCode.WAITING_FOR_VICTIMS,
                    victims=list(preempted.victims),
                    pool=preempted.pool,
                )
                continue
            # 5. Reasons.
            route, failure = failures[0]
            reasons[job.id] = _explain(route, failure, ledger)
            if is_claimant:
                _hold(ledger, job.id, route, failure)
            else:
                failed[look_alike] = (version, first.priority, reasons[job.id])
    return Decisions(
        cycle=snapshot.cycle,
        serial=config.serial,
        admits=tuple(admits),
        preempts=tuple(preempts),
        rejects=tuple(sorted(rejects, key=lambda r: r.job)),
        reasons=reasons,
        claims=claims,
    )


def _same_outcome(seen: tuple[object, int, Reason], priority: int) -> bool:
    """A look-alike's failure holds for this job: no higher priority (no more victims), and the
    same priority where the reason names who went ahead."""
    if seen[2].code is ReasonCode.BLOCKED_BY_HIGHER_PRIORITY:
        return priority == seen[1]
    return priority <= seen[1]


def _hold(ledger: Ledger, job: int, route: Route, failure: Failure) -> None:
    """Hold free capacity for a claimant only when capacity is what it lacks: a claimant
    stopped by its own policy's limit or reservation could not use it, and others could."""
    if failure.level == "pool":
        ledger.hold(job, route)


# Victim searches that found nothing this cycle, per (pool, policy, non-preemptible, batch):
# (priority, demand). Within a cycle usage only grows and candidates only leave, so a waiter
# with no higher priority and no smaller demand on the same keys would find nothing either.
Hopeless = dict[tuple[str, str, bool, int], list[tuple[int, dict[str, int]]]]


def _dominated(
    tried: list[tuple[int, dict[str, int]]], priority: int, demand: dict[str, int]
) -> bool:
    return any(
        p >= priority and d.keys() == demand.keys() and all(d[k] <= demand[k] for k in d)
        for p, d in tried
    )


def _preempt(
    job: Queued,
    failures: list[tuple[Route, Failure]],
    ledger: Ledger,
    on_pool: dict[str, list[Holding]],
    hopeless: Hopeless,
    holding_batches: set[int],
) -> Preempt | None:
    """Victims on the first route where some exist; chosen victims leave the candidates."""
    np = not job.request.preemptible
    batch = job.batch if job.batch in holding_batches else 0
    for route, failure in failures:
        if failure.level not in ("pool", "limit"):
            continue
        tried = hopeless.setdefault((route.pool, route.policy, np, batch), [])
        demand = dict(route.demand)
        if _dominated(tried, route.priority, demand):
            continue
        candidates = on_pool.get(route.pool, [])
        found = victims_among(ledger, route, np, job.batch, candidates)
        if found is None:
            tried.append((route.priority, demand))
            continue
        gone = {v.id for v in found.jobs}
        on_pool[route.pool] = [h for h in candidates if h.id not in gone]
        for victim in found.jobs:
            ledger.leave(victim)
        return Preempt(job.id, tuple(sorted(gone)), route.pool, found.why)
    return None


def explain_failure(route: Route, failure: Failure, ledger: Ledger) -> Reason:
    return _explain(route, failure, ledger)


def _explain(route: Route, failure: Failure, ledger: Ledger) -> Reason:
    deficit = dict(failure.deficit)  # units per key, shown as amounts in the message
    pool = ledger.config.pools[route.pool]
    if failure.level == "reserved":
        return reason(ReasonCode.RESERVATION_FULL, policy=route.policy, deficit=deficit)
    if failure.level == "limit":
        return reason(ReasonCode.POLICY_LIMIT_REACHED, policy=route.policy, deficit=deficit)
    if failure.level == "overcommitted":
        return reason(ReasonCode.OVERCOMMITTED, pool=route.pool, excess=deficit)
    keys = failure.keys
    if ledger.held_for(route):
        return reason(
            ReasonCode.RESERVED_FOR_PREEMPTOR,
            pool=route.pool,
            preemptor=ledger.claimant.get(route.pool, "?"),
            deficit=deficit,
        )
    ahead = list(
        itertools.islice(
            (j for j, p in ledger.admitted_now.get(route.pool, ()) if p > route.priority), 4
        )
    )
    if ahead and ledger.fit_at_start(route):
        shown = [str(i) for i in ahead[:3]] + (["more"] if len(ahead) > 3 else [])
        return reason(
            ReasonCode.BLOCKED_BY_HIGHER_PRIORITY, pool=route.pool, jobs=shown, deficit=deficit
        )
    if WORKER in keys:
        return reason(ReasonCode.NO_WORKER_FREE, pool=route.pool, workers=len(pool.workers))
    if keys == {STEP_RUN}:
        limit = pool.capacity.get(STEP_RUN, 0) // 1000
        return reason(ReasonCode.STEP_RUN_EXHAUSTED, pool=route.pool, limit=limit)
    return reason(ReasonCode.WAITING_FOR_CAPACITY, pool=route.pool, deficit=deficit)
