"""Preemption: the smallest set of running jobs whose exit lets a waiting job in.

Who may be a victim (ZenML's rules, Kueue's order):
- only preemptible jobs, not already stopping, not admitted in this cycle, not of the waiter's
  own batch (a job's ranks never preempt each other);
- of the waiter's own policy: only strictly lower priority, and only if the policy may preempt;
- of another policy: either the waiter takes back its own reservation (reclaim, any priority)
  or the victim has strictly lower priority and the waiter's policy may preempt; and only
  while that policy still borrows (uses more than it reserved, on a key both jobs need) once
  the victims taken before it, and the jobs already being stopped, are gone.
Candidates are taken borrowers first, then lowest priority, then most recently admitted, then
highest id, until the waiter fits; then each is put back, last first, if the waiter still fits
without it. Since usage only shrinks as victims are added, a set from which no single victim
can be dropped is minimal: no proper subset lets the waiter in.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Holding, Route


@dataclass(frozen=True)
class Victims:
    jobs: tuple[Holding, ...]
    why: str  # "reclaim" or "priority"


def eligible(ledger: Ledger, route: Route, waiter_batch: int, candidate: Holding) -> str | None:
    """Why `candidate` may be a victim for a waiter on `route` ("reclaim" or "priority"),
    before the borrowing check, or None. Another policy's jobs also need that policy to be
    borrowing when they are taken (checked as victims are taken)."""
    if (
        not candidate.preemptible
        or candidate.stopping
        or candidate.pool != route.pool
        or (waiter_batch and candidate.batch == waiter_batch)
    ):
        return None
    may_preempt = ledger.config.policies[route.policy].may_preempt
    lower = candidate.priority < route.priority and may_preempt
    if candidate.policy == route.policy:
        return "priority" if lower else None
    if ledger.within_reservation(route):
        return "reclaim"
    return "priority" if lower else None


def _order(route: Route, job: Holding) -> tuple[int, int, float, int]:
    return (0 if job.policy != route.policy else 1, job.priority, -job.admitted_at, -job.id)


def find_victims(
    ledger: Ledger,
    route: Route,
    np: bool,
    waiter_batch: int,
    holding: Iterable[Holding],
) -> Victims | None:
    """The minimal victim set for the waiter on `route`, or None when none exists."""
    ranked: list[tuple[Holding, str]] = []
    for job in holding:
        why = eligible(ledger, route, waiter_batch, job)
        if why is not None:
            ranked.append((job, why))
    if not ranked:
        return None
    ranked.sort(key=lambda pair: _order(route, pair[0]))
    removed_pool: dict[str, int] = {}
    removed_policy: dict[str, int] = {}

    def change(job: Holding, sign: int) -> None:
        for key, value in job.amounts:
            removed_pool[key] = removed_pool.get(key, 0) + sign * value
            if job.policy == route.policy:
                removed_policy[key] = removed_policy.get(key, 0) + sign * value

    demand = {k for k, _ in route.demand}
    taken: dict[str, dict[str, int]] = {}  # per other policy: what its victims so far hold
    chosen: list[tuple[Holding, str]] = []
    for job, why in ranked:
        if job.policy != route.policy:
            # Only while it borrows: taking more would push it under its reservation, and
            # its jobs could then take the capacity back (preemption back and forth).
            contended = demand & {k for k, _ in job.amounts}
            mine = taken.setdefault(job.policy, {})
            if not ledger.borrowing(job.policy, contended, mine):
                continue
            for key, value in job.amounts:
                mine[key] = mine.get(key, 0) + value
        change(job, +1)
        chosen.append((job, why))
        if ledger.check(route, np, removed_pool, removed_policy) is None:
            break
    else:
        return None
    for pair in reversed(chosen[:-1]):
        change(pair[0], -1)
        if ledger.check(route, np, removed_pool, removed_policy) is None:
            chosen.remove(pair)
        else:
            change(pair[0], +1)
    kinds = {why for _, why in chosen}
    return Victims(tuple(job for job, _ in chosen), "reclaim" if "reclaim" in kinds else "priority")
