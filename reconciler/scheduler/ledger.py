"""The usage ledger of one cycle: what every pool and policy holds, updated as the cycle admits.

Built from the jobs holding capacity (admitted, running, and stopping ones: a preempted job's
capacity stays counted until its process has exited). `check` says whether a route fits now
and, if not, why, per key.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from reconciler.scheduler.amounts import WORKER, Amounts
from reconciler.scheduler.model import AppliedConfig, Holding, Route

Usage = dict[str, dict[str, int]]


@dataclass(frozen=True)
class Failure:
    """Why a route does not fit now. `level`: where the first binding limit is ("reserved",
    "limit", "pool", "overcommitted"); `deficit`: units missing per key at that level."""

    level: str
    deficit: tuple[tuple[str, int], ...]

    @property
    def keys(self) -> set[str]:
        return {k for k, _ in self.deficit}


def _usage() -> Usage:
    return defaultdict(lambda: defaultdict(int))


class Ledger:
    def __init__(self, config: AppliedConfig, holding: tuple[Holding, ...]):
        self.config = config
        self.pool_used: Usage = _usage()
        self.policy_used: Usage = _usage()
        self.np_used: Usage = _usage()
        self.claimed: Usage = _usage()
        self.claimant: dict[str, int] = {}
        self.leaving: Usage = _usage()  # per policy: held by jobs being stopped
        self.busy_workers: dict[str, set[str]] = defaultdict(set)
        self.admitted_now: dict[str, list[tuple[int, int]]] = defaultdict(list)  # (job, priority)
        # Per pool, moves on every change to the pool or its policies: while a pool's version
        # stands, every question about it has the same answer.
        self.versions: dict[str, int] = defaultdict(int)
        self.borrowers: set[str] = set()
        for job in holding:
            self._take(job.pool, job.policy, job.amounts, not job.preemptible, job.worker)
            if job.stopping:
                self.leave(job)
        # As of the snapshot: who borrows is judged on this, so the cycle's own admissions
        # never turn a running job into a victim.
        self.policy_start = {p: dict(keys) for p, keys in self.policy_used.items()}
        self.pool_start = {p: dict(keys) for p, keys in self.pool_used.items()}
        # Policies using more than they reserved on some key (without jobs being stopped).
        self.borrowers = {
            p for p, used in self.policy_start.items() if self.borrowing(p, set(used))
        }

    # -- changes ---------------------------------------------------------------------------------

    def _take(self, pool: str, policy: str, amounts: Amounts, np: bool, worker: str | None) -> None:
        self.versions[pool] += 1
        pool_used, policy_used = self.pool_used[pool], self.policy_used[policy]
        np_used = self.np_used[policy] if np else None
        for key, value in amounts:
            pool_used[key] += value
            policy_used[key] += value
            if np_used is not None:
                np_used[key] += value
        if worker is not None:
            self.busy_workers[pool].add(worker)

    def admit(self, job: int, route: Route, np: bool) -> str | None:
        """Account the job on the route; returns the worker it gets on a worker pool."""
        worker = self.free_worker(route.pool)
        self._take(route.pool, route.policy, route.demand, np, worker)
        self.admitted_now[route.pool].append((job, route.priority))
        return worker

    def leave(self, job: Holding) -> None:
        """A job chosen as a victim (or being stopped): still counted until it exits, but no
        longer part of what its policy borrows."""
        self.versions[job.pool] += 1
        leaving = self.leaving[job.policy]
        for key, value in job.amounts:
            leaving[key] += value
        if job.policy in self.borrowers and not self.borrowing(
            job.policy, set(self.policy_start.get(job.policy, {}))
        ):
            self.borrowers.discard(job.policy)

    def hold(self, job: int, route: Route) -> None:
        """Keep what is free of the route's demand for a preemptor whose victims are exiting,
        so nobody else takes the capacity they release (the claim)."""
        self.versions[route.pool] += 1
        pool = self.config.pools[route.pool]
        used = self.pool_used[route.pool]
        for key, need in route.demand:
            capacity = pool.capacity.get(key)
            if capacity is None:
                continue
            held = min(max(capacity - used[key], 0), need)
            if held:
                used[key] += held
                self.claimed[route.pool][key] += held
                self.claimant.setdefault(route.pool, job)

    # -- questions -------------------------------------------------------------------------------

    def free_worker(self, pool_name: str) -> str | None:
        pool = self.config.pools[pool_name]
        if pool.kind != "worker":
            return None
        busy = self.busy_workers[pool_name]
        return next((w.id for w in pool.workers if w.id not in busy), None)

    def check(
        self,
        route: Route,
        np: bool,
        removed_pool: dict[str, int] | None = None,
        removed_policy: dict[str, int] | None = None,
    ) -> Failure | None:
        """None when the route fits now (after taking away `removed_*`, the usage of would-be
        victims); else the first level that binds and the deficit per key there."""
        pool = self.config.pools[route.pool]
        policy = self.config.policies[route.policy]
        capacity, limits, guaranteed = pool.capacity, policy.limit, policy.reserved
        pool_used, policy_used = self.pool_used[route.pool], self.policy_used[route.policy]
        np_used = self.np_used[route.policy] if np else None
        fits = True
        for key, need in route.demand:  # the common case, without allocating anything
            used = pool_used[key] - (removed_pool.get(key, 0) if removed_pool else 0)
            if used + need > capacity.get(key, 0):
                fits = False
                break
            limit = None if limits is None else limits.get(key)
            if limit is not None:
                mine = policy_used[key] - (removed_policy.get(key, 0) if removed_policy else 0)
                if mine + need > limit:
                    fits = False
                    break
            if np_used is not None and np_used[key] + need > guaranteed.get(key, 0):
                fits = False
                break
        if fits:
            if (
                pool.kind == "worker"
                and removed_pool is None
                and self.free_worker(route.pool) is None
            ):
                return Failure("pool", ((WORKER, 0),))
            return None
        return self._failure(route, np, removed_pool, removed_policy)

    def _failure(
        self,
        route: Route,
        np: bool,
        removed_pool: dict[str, int] | None,
        removed_policy: dict[str, int] | None,
    ) -> Failure:
        pool = self.config.pools[route.pool]
        policy = self.config.policies[route.policy]
        pool_used, policy_used = self.pool_used[route.pool], self.policy_used[route.policy]
        over: list[tuple[str, int]] = []
        limited: list[tuple[str, int]] = []
        reserved: list[tuple[str, int]] = []
        overcommitted: list[tuple[str, int]] = []
        for key, need in route.demand:
            capacity = pool.capacity.get(key, 0)
            used = pool_used[key] - (removed_pool.get(key, 0) if removed_pool else 0)
            if used > capacity and not removed_pool:
                overcommitted.append((key, used - capacity))
            elif used + need > capacity:
                over.append((key, used + need - capacity))
            limit = None if policy.limit is None else policy.limit.get(key)
            if limit is not None:
                mine = policy_used[key] - (removed_policy.get(key, 0) if removed_policy else 0)
                if mine + need > limit:
                    limited.append((key, mine + need - limit))
            if np:
                guaranteed = policy.reserved.get(key, 0)
                if self.np_used[route.policy][key] + need > guaranteed:
                    reserved.append((key, self.np_used[route.policy][key] + need - guaranteed))
        if reserved:
            return Failure("reserved", tuple(reserved))
        if limited:
            return Failure("limit", tuple(limited))
        if overcommitted:
            return Failure("overcommitted", tuple(overcommitted))
        return Failure("pool", tuple(over))

    def shortage(self, route: Route, np: bool) -> tuple[dict[str, int], dict[str, int]] | None:
        """What the route lacks per key, in the pool and under its policy's limit, for victims
        to free; None when its non-preemptible reservation is what binds (victims cannot help)."""
        pool = self.config.pools[route.pool]
        policy = self.config.policies[route.policy]
        pool_used, policy_used = self.pool_used[route.pool], self.policy_used[route.policy]
        in_pool: dict[str, int] = {}
        in_policy: dict[str, int] = {}
        for key, need in route.demand:
            if np and self.np_used[route.policy][key] + need > policy.reserved.get(key, 0):
                return None
            over = pool_used[key] + need - pool.capacity.get(key, 0)
            if over > 0:
                in_pool[key] = over
            limit = None if policy.limit is None else policy.limit.get(key)
            if limit is not None and policy_used[key] + need > limit:
                in_policy[key] = policy_used[key] + need - limit
        return in_pool, in_policy

    def held_for(self, route: Route) -> bool:
        """Whether the route would fit but for capacity held for a preemptor."""
        held = self.claimed.get(route.pool)
        if not held:
            return False
        return self.check(route, False, removed_pool=dict(held)) is None

    def fit_at_start(self, route: Route) -> bool:
        """Whether the route fit the pool before this cycle's admissions took capacity."""
        pool = self.config.pools[route.pool]
        start = self.pool_start.get(route.pool, {})
        return all(start.get(k, 0) + need <= pool.capacity.get(k, 0) for k, need in route.demand)

    def borrowing(self, policy: str, keys: set[str], minus: dict[str, int] | None = None) -> bool:
        """Whether a policy uses more than it reserved on one of `keys`: as of the snapshot,
        without what its jobs being stopped hold, nor `minus` (victims already taken)."""
        known = self.config.policies.get(policy)
        reserved = known.reserved if known is not None else {}
        used, leaving = self.policy_start.get(policy, {}), self.leaving.get(policy, {})
        return any(
            used.get(k, 0) - leaving.get(k, 0) - (minus or {}).get(k, 0) > reserved.get(k, 0)
            for k in keys
        )

    def keeps_reservation(self, policy: str, keys: set[str], minus: dict[str, int]) -> bool:
        """Whether a policy still uses at least its reservation on every one of `keys` once
        `minus` is gone (as of the snapshot, without its jobs being stopped)."""
        known = self.config.policies.get(policy)
        reserved = known.reserved if known is not None else {}
        used, leaving = self.policy_start.get(policy, {}), self.leaving.get(policy, {})
        return all(
            used.get(k, 0) - leaving.get(k, 0) - minus.get(k, 0) >= reserved.get(k, 0) for k in keys
        )

    def within_reservation(self, route: Route) -> bool:
        """Whether the route's policy would stay inside its reservation with the job added."""
        policy = self.config.policies[route.policy]
        used = self.policy_used[route.policy]
        return all(used[k] + need <= policy.reserved.get(k, 0) for k, need in route.demand)
