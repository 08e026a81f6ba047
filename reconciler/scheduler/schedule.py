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

from reconciler.scheduler.amounts import STEP_RUN, WORKER, show_all
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
from reconciler.scheduler.preemption import find_victims
from reconciler.scheduler.reasons import Reason, ReasonCode, reason
from reconciler.scheduler.routing import resolve

MemoKey = tuple[Route, bool, int]


def schedule(snapshot: Snapshot, now: float) -> Decisions:
    config = snapshot.config
    # 1. Routes.
    routes: dict[int, tuple[Route, ...]] = {}
    rejects: list[Reject] = []
    resolved: dict[object, tuple[Route, ...] | Reason] = {}
    when = f" since the apply of state serial {config.serial}"
    for job in snapshot.queued:
        found = resolved.get(job.request)
        if found is None:
            found = resolved[job.request] = resolve(job.request, config, when=when)
        if isinstance(found, Reason):
            rejects.append(Reject(job.id, found))
        else:
            routes[job.id] = found

    # 2. Ledger.
    ledger = Ledger(config, snapshot.holding)
    on_pool: dict[str, list[Holding]] = {}
    outstanding: dict[int, list[int]] = {}
    for held in snapshot.holding:
        on_pool.setdefault(held.pool, []).append(held)
        if held.stopping and held.preempted_for is not None:
            outstanding.setdefault(held.preempted_for, []).append(held.id)

    # 3. Order.
    def claimant(job: Queued) -> bool:
        return job.claim_until is not None and job.claim_until > now

    waiting = [job for job in snapshot.queued if job.id in routes]
    waiting.sort(key=lambda j: (not claimant(j), -routes[j.id][0].priority, j.submitted_at, j.id))

    # 4. Admit (or preempt).
    admits: list[Admit] = []
    preempts: list[Preempt] = []
    reasons: dict[int, Reason] = {}
    claims: dict[int, float] = {}
    chosen: set[int] = set()
    hopeless: set[MemoKey] = set()  # no victims for this (route, np, batch) this cycle
    for job in waiting:
        np = not job.request.preemptible
        failures: list[tuple[Route, Failure]] = []
        for route in routes[job.id]:
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
            if victims and claimant(job):
                route, failure = failures[0]
                _hold(ledger, job.id, route, failure)
                reasons[job.id] = reason(
                    ReasonCode.WAITING_FOR_VICTIMS, victims=sorted(victims), pool=route.pool
                )
                continue
            preempted = _preempt(job, failures, ledger, on_pool, chosen, hopeless)
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
            if claimant(job):
                _hold(ledger, job.id, route, failure)
    return Decisions(
        cycle=snapshot.cycle,
        serial=config.serial,
        admits=tuple(admits),
        preempts=tuple(preempts),
        rejects=tuple(sorted(rejects, key=lambda r: r.job)),
        reasons=reasons,
        claims=claims,
    )


def _hold(ledger: Ledger, job: int, route: Route, failure: Failure) -> None:
    """Hold free capacity for a claimant only when capacity is what it lacks: a claimant
    stopped by its own policy's limit or reservation could not use it, and others could."""
    if failure.level == "pool":
        ledger.hold(job, route)


def _preempt(
    job: Queued,
    failures: list[tuple[Route, Failure]],
    ledger: Ledger,
    on_pool: dict[str, list[Holding]],
    chosen: set[int],
    hopeless: set[MemoKey],
) -> Preempt | None:
    np = not job.request.preemptible
    for route, failure in failures:
        if failure.level not in ("pool", "limit"):
            continue
        memo = (route, np, job.batch)
        if memo in hopeless:
            continue
        admitted_now = {job for job, _ in ledger.admitted_now.get(route.pool, ())}
        candidates = [
            h
            for h in on_pool.get(route.pool, ())
            if h.id not in chosen and h.id not in admitted_now
        ]
        found = find_victims(ledger, route, np, job.batch, candidates)
        if found is None:
            hopeless.add(memo)
            continue
        chosen.update(v.id for v in found.jobs)
        for victim in found.jobs:
            ledger.leave(victim)
        return Preempt(job.id, tuple(sorted(v.id for v in found.jobs)), route.pool, found.why)
    return None


def explain_failure(route: Route, failure: Failure, ledger: Ledger) -> Reason:
    return _explain(route, failure, ledger)


def _explain(route: Route, failure: Failure, ledger: Ledger) -> Reason:
    deficit = show_all(dict(failure.deficit))
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
    ahead = [j for j, p in ledger.admitted_now.get(route.pool, ()) if p > route.priority]
    if ahead and ledger.fit_at_start(route):
        shown = [str(i) for i in ahead[:3]] + ([f"{len(ahead) - 3} more"] if len(ahead) > 3 else [])
        return reason(
            ReasonCode.BLOCKED_BY_HIGHER_PRIORITY, pool=route.pool, jobs=shown, deficit=deficit
        )
    if WORKER in keys:
        return reason(ReasonCode.NO_WORKER_FREE, pool=route.pool, workers=len(pool.workers))
    if keys == {STEP_RUN}:
        limit = pool.capacity.get(STEP_RUN, 0) // 1000
        return reason(ReasonCode.STEP_RUN_EXHAUSTED, pool=route.pool, limit=limit)
    return reason(ReasonCode.WAITING_FOR_CAPACITY, pool=route.pool, deficit=deficit)
