"""Preemption: the smallest set of running jobs whose exit lets a waiting job in.

Who may be a victim (ZenML's rules, Kueue's order):
- only preemptible jobs, not already stopping, not admitted in this cycle, not of the waiter's
  own batch (a job's ranks never preempt each other);
- of the waiter's own policy: only strictly lower priority, and only if the policy may preempt;
- of another policy, only while that policy borrows (uses more than it reserved, on a key
  both jobs need), counting the victims taken before it and the jobs already being stopped as
  gone; then either the waiter takes back its own reservation (reclaim, any priority: while
  the policy still borrows), or the victim has strictly lower priority, the waiter's policy may
  preempt, and the victim's policy keeps at least its reservation once the victim is gone.
These rules make preemption acyclic: a victim can never take its capacity back from its
preemptor while nothing else changes.
Candidates are taken borrowers first, then lowest priority, then most recently admitted, then
highest id, until the waiter fits; then each is put back, last first, if the waiter still fits
without it. Since usage only shrinks as victims are added, a set from which no single victim
can be dropped is minimal: no proper subset lets the waiter in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Holding, Route


@dataclass(frozen=True)
class Victims:
    jobs: tuple[Holding, ...]
    why: str  # "reclaim" or "priority"


def victim_order(job: Holding) -> tuple[int, float, int]:
    """Lowest priority first, then most recently admitted, then highest id."""
    return (job.priority, -job.admitted_at, -job.id)


def _in_order(
    route: Route, ranked: Sequence[Holding], reclaim: bool, may_preempt: bool
) -> Iterator[tuple[Holding, str]]:
    """Candidates in the documented order from a pool's jobs sorted by `victim_order`: other
    policies' first, then the waiter's own; each pass ends where priority no longer allows."""
    lower_only = not reclaim
    for job in ranked:
        if job.policy == route.policy:
            continue
        if lower_only and (job.priority >= route.priority or not may_preempt):
            break
        yield job, "reclaim" if reclaim else "priority"
    if not may_preempt:
        return
    for job in ranked:
        if job.priority >= route.priority:
            break
        if job.policy == route.policy:
            yield job, "priority"


def find_victims(
    ledger: Ledger,
    route: Route,
    np: bool,
    waiter_batch: int,
    holding: Iterable[Holding],
) -> Victims | None:
    """The minimal victim set for the waiter on `route`, or None when none exists.
    `holding`: jobs of the pool; those that cannot be victims are passed over."""
    ranked = sorted(
        (h for h in holding if h.preemptible and not h.stopping and h.pool == route.pool),
        key=victim_order,
    )
    return victims_among(ledger, route, np, waiter_batch, ranked)


def victims_among(
    ledger: Ledger, route: Route, np: bool, waiter_batch: int, ranked: Sequence[Holding]
) -> Victims | None:
    """`find_victims` over a pool's preemptible, running jobs already sorted by
    `victim_order` (a cycle sorts each pool once)."""
    short = ledger.shortage(route, np)
    if short is None:
        return None  # its own non-preemptible reservation is full: no victim would help
    missing_pool, missing_policy = short
    reclaim = ledger.within_reservation(route)  # the waiter would stay within its reservation
    may_preempt = ledger.config.policies[route.policy].may_preempt

    def change(job: Holding, sign: int) -> None:
        for key, value in job.amounts:
            if key in missing_pool:
                missing_pool[key] -= sign * value
            if key in missing_policy and job.policy == route.policy:
                missing_policy[key] -= sign * value

    def enough() -> bool:
        return all(v <= 0 for v in missing_pool.values()) and all(
            v <= 0 for v in missing_policy.values()
        )

    demand = {k for k, _ in route.demand}
    taken: dict[str, dict[str, int]] = {}  # per other policy: what its victims so far hold
    chosen: list[tuple[Holding, str]] = []
    for job, why in _in_order(route, ranked, reclaim, may_preempt):
        if waiter_batch and job.batch == waiter_batch:
            continue
        if job.policy != route.policy:
            # Another policy gives up only what it borrows: for a reclaim, while it still
            # borrows; for priority, never below its reservation. Otherwise its jobs could
            # take the capacity back (preemption back and forth).
            if job.policy not in ledger.borrowers:
                continue
            contended = demand & {k for k, _ in job.amounts}
            mine = taken.setdefault(job.policy, {})
            if reclaim:
                allowed = ledger.borrowing(job.policy, contended, mine)
            else:
                after = dict(mine)
                for key, value in job.amounts:
                    after[key] = after.get(key, 0) + value
                allowed = ledger.keeps_reservation(job.policy, contended, after)
            if not allowed:
                continue
            for key, value in job.amounts:
                mine[key] = mine.get(key, 0) + value
        change(job, +1)
        chosen.append((job, why))
        if enough():
            break
    else:
        return None
    for pair in reversed(chosen[:-1]):
        change(pair[0], -1)
        if enough():
            chosen.remove(pair)
        else:
            change(pair[0], +1)
    kinds = {why for _, why in chosen}
    return Victims(tuple(job for job, _ in chosen), "reclaim" if "reclaim" in kinds else "priority")
