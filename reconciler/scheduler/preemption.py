"""Preemption: the smallest set of running jobs whose exit lets a waiting job in.

Who may be a victim (ZenML's rules, Kueue's order):
- only preemptible jobs, not already stopping, not admitted in this cycle, not of the waiter's
  own batch (a job's ranks never preempt each other);
- of the waiter's own policy: only strictly lower priority, and only if the policy may preempt;
- of another policy, only while that policy borrows (uses more than it reserved, on a key
  both jobs need), counting the victims taken before it and the jobs already being stopped as
  gone; then either the waiter takes back its own reservation (reclaim, any priority: while
  the policy still borrows), or the victim has strictly lower priority, the waiter's policy may
  preempt, and the victim's policy keeps at least its reservation once the victim is gone;
- of another pool of the waiter's tree (pools joined by `parent`), the same rules one level
  up: only while that pool uses more than its own capacity, taken back by a waiter whose pool
  stays within its own capacity (reclaim), or by strictly higher priority as long as the
  victim's pool keeps at least its own capacity.
These rules make preemption acyclic: a victim can never take its capacity back from its
preemptor while nothing else changes.
Candidates are taken other policies' and other pools' jobs first, then the waiter's own
policy's; each in order of lowest priority, then most recently admitted, then highest id,
until the waiter fits; then each is put back, last first, if the waiter still fits without
it. Since usage only shrinks as victims are added, a set from which no single victim can be
dropped is minimal: no proper subset lets the waiter in.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from reconciler.scheduler.amounts import Amounts
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Holding, Route

_KEYS: dict[Amounts, frozenset[str]] = {}


def keys_of(amounts: Amounts) -> frozenset[str]:
    found = _KEYS.get(amounts)
    if found is None:
        if len(_KEYS) > 10_000:
            _KEYS.clear()
        found = _KEYS[amounts] = frozenset(k for k, _ in amounts)
    return found


@dataclass(frozen=True)
class Victims:
    jobs: tuple[Holding, ...]
    why: str  # "reclaim" or "priority"


def victim_order(job: Holding) -> tuple[int, float, int]:
    """Lowest priority first, then most recently admitted, then highest id."""
    return (job.priority, -job.admitted_at, -job.id)


class Candidates:
    """A tree's would-be victims for one cycle: preemptible running jobs, not stopping, in
    `victim_order`, with the views a search walks instead of the whole list:

    - `own[policy]`: the policy's jobs (the second pass: its own lower priority work);
    - `lending()`: jobs of policies (or pools) that borrow: only those can be taken in the
      first pass. Borrowing only ends within a cycle, so the view only shrinks;
    - `givable(keys)`: of those, the jobs their policy (or pool) could give up alone by
      priority on `keys` (keeping its reservation). Spare capacity only shrinks within a cycle,
      so a job found not givable alone is never givable later: it leaves the view.
    """

    def __init__(self, ledger: Ledger, ranked: Sequence[Holding]):
        self.ledger = ledger
        self.jobs = list(ranked)
        self.own: dict[str, list[Holding]] = {}
        for job in self.jobs:
            self.own.setdefault(job.policy, []).append(job)
        self._lending: list[Holding] | None = None
        self._stamp = (-1, -1)
        self._givable: dict[frozenset[str], list[Holding]] = {}

    def lending(self) -> list[Holding]:
        ledger = self.ledger
        stamp = (len(ledger.borrowers), len(ledger.pool_borrowers))
        if self._lending is None or stamp != self._stamp:
            self._stamp = stamp
            source = self.jobs if self._lending is None else self._lending
            self._lending = [job for job in source if self._lends(job)]
            for keys, jobs in self._givable.items():
                self._givable[keys] = [job for job in jobs if self._lends(job)]
        return self._lending

    def _lends(self, job: Holding) -> bool:
        return job.policy in self.ledger.borrowers or job.pool in self.ledger.pool_borrowers

    def givable(self, keys: frozenset[str]) -> list[Holding]:
        lending = self.lending()
        found = self._givable.get(keys)
        if found is None:
            found = self._givable[keys] = list(lending)
        return found

    def drop(self, keys: frozenset[str], job: Holding) -> None:
        found = self._givable.get(keys)
        if found is not None and job in found:
            found.remove(job)

    def remove(self, victims: Sequence[Holding]) -> None:
        """Victims leave every view. They come from the front (victim order), so removing
        them one by one costs little; only the lists that hold them are touched."""
        _without(self.jobs, victims)
        for policy in {job.policy for job in victims}:
            found = self.own.get(policy)
            if found is not None:
                _without(found, victims)
        if self._lending is not None:
            _without(self._lending, victims)
        for jobs in self._givable.values():
            _without(jobs, victims)


def _without(jobs: list[Holding], victims: Sequence[Holding]) -> None:
    for victim in victims:
        for index, job in enumerate(jobs):
            if job is victim:
                del jobs[index]
                break


def find_victims(
    ledger: Ledger,
    route: Route,
    np: bool,
    waiter_batch: int,
    holding: Iterable[Holding],
) -> Victims | None:
    """The minimal victim set for the waiter on `route`, or None when none exists.
    `holding`: jobs of the pool's tree; those that cannot be victims are passed over."""
    tree = set(ledger.config.tree_of(route.pool)) if route.pool in ledger.config.pools else set()
    ranked = sorted(
        (h for h in holding if h.preemptible and not h.stopping and h.pool in tree),
        key=victim_order,
    )
    return victims_among(ledger, route, np, waiter_batch, Candidates(ledger, ranked))


def victims_among(
    ledger: Ledger, route: Route, np: bool, waiter_batch: int, candidates: Candidates
) -> Victims | None:
    """`find_victims` over a tree's candidates (a cycle keeps them per tree)."""
    priority, own_policy, own_pool = route.priority, route.policy, route.pool
    may_preempt = ledger.config.policies[own_policy].may_preempt
    own = candidates.own.get(own_policy, ()) if may_preempt else ()
    if not candidates.jobs:
        return None
    short = ledger.shortage(route, np)
    if short is None:
        return None  # its own non-preemptible reservation is full: no victim would help
    missing_pool, missing_policy = short
    reclaim = ledger.within_reservation(route)  # the waiter would stay within its reservation
    shared = len(ledger.pools[own_pool].tree.names) > 1
    pool_reclaim = shared and ledger.within_capacity(route)
    demand = keys_of(route.demand)
    if reclaim or pool_reclaim:
        first: list[Holding] = candidates.lending()
    elif may_preempt:
        first = candidates.givable(demand)
        if first and first[0].priority >= priority:
            first = []
    else:
        first = []
    if not first and not (own and own[0].priority < priority):
        return None  # nobody could be taken: no need to walk

    def change(job: Holding, sign: int) -> None:
        for key, value in job.amounts:
            if key in missing_pool:
                missing_pool[key] -= sign * value
            if key in missing_policy and job.policy == own_policy and job.pool == own_pool:
                missing_policy[key] -= sign * value

    def enough() -> bool:
        return all(v <= 0 for v in missing_pool.values()) and all(
            v <= 0 for v in missing_policy.values()
        )

    taken: dict[str, dict[str, int]] = {}  # per other policy: what its victims so far hold
    taken_pool: dict[str, dict[str, int]] = {}  # per other pool of the tree: the same
    chosen: list[tuple[Holding, str]] = []
    never: list[Holding] = []
    found = False
    for job, why in _first_pass(route, first, reclaim, pool_reclaim, may_preempt):
        if waiter_batch and job.batch == waiter_batch:
            continue
        if job.pool != own_pool:
            # Another pool gives up only what it borrows from the tree.
            mine = taken_pool.setdefault(job.pool, {})
            if job.pool not in ledger.pool_borrowers:
                continue
            pool_level = True
        else:
            # Another policy gives up only what it borrows: for a reclaim, while it still
            # borrows; for priority, never below its reservation. Otherwise its jobs could
            # take the capacity back (preemption back and forth).
            mine = taken.setdefault(job.policy, {})
            if job.policy not in ledger.borrowers:
                continue
            pool_level = False
        if not _gives_up(ledger, job, demand, why, mine, pool=pool_level):
            if why == "priority" and not mine:
                never.append(job)  # not even alone: never in this cycle
            continue
        change(job, +1)
        chosen.append((job, why))
        if enough():
            found = True
            break
    for job in never:
        candidates.drop(demand, job)
    if not found:
        for job in own:
            if job.priority >= priority:
                break
            if waiter_batch and job.batch == waiter_batch:
                continue
            change(job, +1)
            chosen.append((job, "priority"))
            if enough():
                found = True
                break
    if not found:
        return None
    for pair in reversed(chosen[:-1]):
        change(pair[0], -1)
        if enough():
            chosen.remove(pair)
        else:
            change(pair[0], +1)
    kinds = {why for _, why in chosen}
    return Victims(tuple(job for job, _ in chosen), "reclaim" if "reclaim" in kinds else "priority")


def _first_pass(
    route: Route, ranked: Sequence[Holding], reclaim: bool, pool_reclaim: bool, may_preempt: bool
) -> Iterator[tuple[Holding, str]]:
    """Other policies' and pools' candidates in victim order; the pass ends where priority no
    longer allows."""
    priority, own_pool, own_policy = route.priority, route.pool, route.policy
    for job in ranked:
        if job.pool == own_pool:
            if job.policy == own_policy:
                continue
            takes_back = reclaim
        else:
            takes_back = pool_reclaim
        if job.priority >= priority or not may_preempt:
            if not (reclaim or pool_reclaim):
                break
            if not takes_back:
                continue
        yield job, "reclaim" if takes_back else "priority"


def _gives_up(
    ledger: Ledger, job: Holding, demand: frozenset[str], why: str, mine: dict[str, int], pool: bool
) -> bool:
    """Whether another policy (or pool) may lose `job`, given `mine`, what its victims so far
    hold; if so, the job is added to `mine`."""
    contended = set(demand & keys_of(job.amounts))
    name = job.pool if pool else job.policy
    if why == "reclaim":
        borrowing = ledger.pool_borrowing if pool else ledger.borrowing
        allowed = borrowing(name, contended, mine)
    else:
        after = dict(mine)
        for key, value in job.amounts:
            after[key] = after.get(key, 0) + value
        keeps = ledger.pool_keeps_capacity if pool else ledger.keeps_reservation
        allowed = keeps(name, contended, after)
    if allowed:
        for key, value in job.amounts:
            mine[key] = mine.get(key, 0) + value
    return allowed
