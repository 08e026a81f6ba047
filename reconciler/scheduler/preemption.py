"""Preemption: the smallest set of running jobs whose exit lets a waiting job in.

Who may be a victim (ZenML's rules, Kueue's order):
- only preemptible jobs, not already stopping, not admitted in this cycle, not of the waiter's
  own batch (a job's ranks never preempt each other);
- of the waiter's own policy: only strictly lower priority, and only if the policy may preempt;
- of another policy, only while that policy borrows (uses more than it reserved) on a key the
  pool lacks for the waiter, counting the victims taken before it and the jobs already being
  stopped as gone; then either the waiter takes back its own reservation (reclaim, any
  priority: while the policy still borrows so), or the victim has strictly lower priority, the
  waiter's policy may preempt, and the victim's policy keeps at least its reservation on those
  keys once the victim is gone. A key the waiter finds room for (such as the `step_run` every
  job takes, or cpu beside a short gpu) neither shields a policy that borrows what the waiter
  lacks nor exposes one that borrows only it: a policy within its reservation of gpu keeps its
  gpus when it borrows cpu, as Kueue reclaims only from queues borrowing what needs preemption;
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

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from reconciler.scheduler.candidates import Candidates, victim_order
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Holding, Route


class Victims(NamedTuple):
    jobs: tuple[Holding, ...]
    why: str  # "reclaim" or "priority"


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
    where = ledger.pools[route.pool].tree if route.pool in ledger.pools else None
    return victims_among(ledger, route, np, waiter_batch, Candidates(ledger, ranked, where))


def victims_among(
    ledger: Ledger, route: Route, np: bool, waiter_batch: int, candidates: Candidates
) -> Victims | None:
    """`find_victims` over a tree's candidates (a cycle keeps them per tree)."""
    priority, own_policy, own_pool = route.priority, route.policy, route.pool
    may_preempt = ledger.config.policies[own_policy].may_preempt
    own = candidates.own.get(own_policy, ()) if may_preempt else ()
    if not candidates.jobs:
        return None
    reclaim = ledger.within_reservation(route)  # the waiter would stay within its reservation
    shared = len(ledger.pools[own_pool].tree.names) > 1
    pool_reclaim = shared and ledger.within_capacity(route)
    short = ledger.shortage(route, np)
    if short is None:
        return None  # its own non-preemptible reservation is full: no victim would help
    missing_pool, missing_policy = short
    # The keys the pool lacks for the waiter: by priority, another policy (or pool) keeps its
    # reservation on these; a key the waiter finds room for (`step_run` every job takes) is
    # not what it takes from the victim's policy, so it protects no borrower.
    contended = frozenset(missing_pool)
    if reclaim or pool_reclaim:
        first: list[Holding] = candidates.lending() if contended else []
    elif may_preempt and contended:
        first = candidates.givable(contended)
        if first and first[0].priority >= priority:
            first = []
    else:
        first = []
    if not first and not (own and own[0].priority < priority):
        return None  # nobody could be taken: no need to walk

    # What is still missing once the chosen victims are gone: `missing_pool` counts every
    # victim, `missing_policy` only the waiter's own policy's jobs in its own pool.
    taken: dict[str, dict[str, int]] = {}  # per other policy: what its victims so far hold
    taken_pool: dict[str, dict[str, int]] = {}  # per other pool of the tree: the same
    chosen: list[tuple[Holding, str]] = []
    never: list[Holding] = []
    found = False
    borrowers, pool_borrowers = ledger.borrowers, ledger.pool_borrowers
    either = reclaim or pool_reclaim
    # Other policies' and pools' candidates in victim order; the pass ends where priority no
    # longer allows.
    for job in first:
        if job.pool == own_pool:
            if job.policy == own_policy:
                continue
            takes_back = reclaim
        else:
            takes_back = pool_reclaim
        if job.priority >= priority or not may_preempt:
            if not either:
                break
            if not takes_back:
                continue
        why = "reclaim" if takes_back else "priority"
        if waiter_batch and job.batch == waiter_batch:
            continue
        if job.pool != own_pool:
            # Another pool gives up only what it borrows from the tree.
            mine = taken_pool.setdefault(job.pool, {})
            if job.pool not in pool_borrowers:
                continue
            pool_level = True
        else:
            # Another policy gives up only what it borrows: for a reclaim, while it still
            # borrows; for priority, never below its reservation. Otherwise its jobs could
            # take the capacity back (preemption back and forth).
            mine = taken.setdefault(job.policy, {})
            if job.policy not in borrowers:
                continue
            pool_level = False
        if not _holds_any(job, contended):
            continue  # frees nothing the waiter lacks
        if not _gives_up(ledger, job, contended, takes_back, mine, pool_level):
            if not takes_back and not mine:
                never.append(job)  # not even alone: never in this cycle
            continue
        chosen.append((job, why))
        if _take(job, own_policy, own_pool, missing_pool, missing_policy):
            found = True
            break
    for job in never:
        candidates.drop(contended, job)
    if not found:
        for job in own:
            if job.priority >= priority:
                break
            if waiter_batch and job.batch == waiter_batch:
                continue
            chosen.append((job, "priority"))
            if _take(job, own_policy, own_pool, missing_pool, missing_policy):
                found = True
                break
    if not found:
        return None
    # Put back, last first, each victim the waiter fits without.
    for pair in reversed(chosen[:-1]):
        _change(pair[0], own_policy, own_pool, missing_pool, missing_policy, -1)
        if _enough(missing_pool, missing_policy):
            chosen.remove(pair)
        else:
            _change(pair[0], own_policy, own_pool, missing_pool, missing_policy, +1)
    why = "priority"
    for _, kind in chosen:
        if kind == "reclaim":
            why = kind
            break
    return Victims(tuple([job for job, _ in chosen]), why)


def _change(
    job: Holding,
    own_policy: str,
    own_pool: str,
    missing_pool: dict[str, int],
    missing_policy: dict[str, int],
    sign: int,
) -> None:
    mine = job.policy == own_policy and job.pool == own_pool
    for key, value in job.amounts:
        if key in missing_pool:
            missing_pool[key] -= sign * value
        if mine and key in missing_policy:
            missing_policy[key] -= sign * value


def _take(
    job: Holding,
    own_policy: str,
    own_pool: str,
    missing_pool: dict[str, int],
    missing_policy: dict[str, int],
) -> bool:
    """Count the victim as gone; whether the waiter fits now."""
    _change(job, own_policy, own_pool, missing_pool, missing_policy, +1)
    return _enough(missing_pool, missing_policy)


def _enough(missing_pool: dict[str, int], missing_policy: dict[str, int]) -> bool:
    for value in missing_pool.values():
        if value > 0:
            return False
    for value in missing_policy.values():  # noqa: SIM110 (a loop: no generator on a hot path)
        if value > 0:
            return False
    return True


def _holds_any(job: Holding, keys: frozenset[str]) -> bool:
    for key, value in job.amounts:  # noqa: SIM110 (a loop: no generator on a hot path)
        if value and key in keys:
            return True
    return False


def _gives_up(
    ledger: Ledger,
    job: Holding,
    contended: frozenset[str],
    reclaim: bool,
    mine: dict[str, int],
    pool: bool,
) -> bool:
    """Whether another policy (or pool) may lose `job`, given `mine`, what its victims so far
    hold; if so, the job is added to `mine`. On the keys the pool lacks for the waiter that
    the job holds (as the cycle stands, without what its jobs being stopped hold): a reclaim
    takes it while the policy still uses more than it reserved on one of them; priority only
    if the policy keeps at least its reservation on all of them once the job is gone."""
    used: Mapping[str, int]
    if pool:
        use = ledger.pools.get(job.pool)
        reserved: Mapping[str, int] = use.capacity if use is not None else _NONE
        used = use.used if use is not None else _NONE
        leaving = ledger.pool_leaving.get(job.pool, _NONE)
    else:
        mine_use = ledger.policies.get(job.policy)
        reserved = mine_use.reserved if mine_use is not None else _NONE
        used = mine_use.used if mine_use is not None else _NONE
        leaving = ledger.leaving.get(job.policy, _NONE)
    allowed = not reclaim
    for key, value in job.amounts:
        if key not in contended:
            continue
        left = used.get(key, 0) - leaving.get(key, 0) - mine.get(key, 0)
        if reclaim:
            if left > reserved.get(key, 0):
                allowed = True
                break
        elif left - value < reserved.get(key, 0):
            allowed = False
            break
    if allowed:
        for key, value in job.amounts:
            mine[key] = mine.get(key, 0) + value
    return allowed


_NONE: Mapping[str, int] = {}
