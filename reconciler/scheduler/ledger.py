"""The usage ledger of one cycle: what every pool and policy holds, updated as the cycle admits.

Built from the jobs holding capacity (admitted, running, and stopping ones: a preempted job's
capacity stays counted until its process has exited). `check` says whether a route fits now
and, if not, why, per key.

Pools joined by `parent` form a tree that shares one capacity (like a Kueue cohort): a job
fits while the tree's total usage stays within the tree's total capacity, so a pool lends what
it leaves idle and borrows what others leave idle. Each pool's own capacity is what it is sure
to get back (by reclaim); a pool alone is a tree of one, and then the two are the same thing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping

from reconciler.scheduler.amounts import Amounts
from reconciler.scheduler.fit import failure_without, fits, fits_without, free_worker
from reconciler.scheduler.model import AppliedConfig, Holding, Policy, Pool, Route
from reconciler.scheduler.usage import NO_LIMIT, Failure, PolicyUse, PoolUse, TreeUse

Usage = dict[str, dict[str, int]]
_NO_TREES: dict[int, TreeUse] = {}


class Ledger:
    def __init__(self, config: AppliedConfig, holding: Iterable[Holding]):
        self.config = config
        self.pools: dict[str, PoolUse] = {name: PoolUse(p) for name, p in config.pools.items()}
        self.policies = {name: PolicyUse(p) for name, p in config.policies.items()}
        for members in config.trees.values():
            if len(members) == 1:  # a pool alone: the tree's figures are the pool's own
                use = self.pools[members[0]]
                use.tree = TreeUse(members, dict(use.capacity), use.used)
                continue
            capacity: dict[str, int] = defaultdict(int)
            for name in members:
                for key, value in self.pools[name].capacity.items():
                    capacity[key] += value
            tree = TreeUse(members, dict(capacity), defaultdict(int))
            for name in members:
                self.pools[name].tree = tree
        self.leaving: Usage = defaultdict(lambda: defaultdict(int))  # per policy, being stopped
        self.pool_leaving: Usage = defaultdict(lambda: defaultdict(int))  # per pool
        self._built = False
        stopping = []
        # The trees each policy has jobs in: where its jobs stop being victims once it no
        # longer borrows.
        self._policy_trees: dict[str, dict[int, TreeUse]] = defaultdict(dict)
        # Jobs of one pool, policy, preemptibility and worker are summed, then counted at once.
        groups: dict[tuple[str, str, bool, str | None], list[Holding]] = {}
        for job in holding:
            if job.stopping:
                stopping.append(job)
            group = (job.pool, job.policy, job.preemptible, job.worker)
            found = groups.get(group)
            if found is None:
                groups[group] = [job]
            else:
                found.append(job)
        for jobs in groups.values():
            job = jobs[0]
            pool, policy = self._uses(job)
            self._policy_trees[job.policy][id(pool.tree)] = pool.tree
            amounts = job.amounts if len(jobs) == 1 else _summed(jobs)
            self.take(pool, policy, amounts, not job.preemptible, job.worker)
        for job in stopping:
            self.leave(job)
        # Who borrows: uses more than it reserved (a pool: more than its own capacity, in a
        # tree of pools), not counting what its jobs being stopped hold. Judged as the cycle
        # goes, as the next cycle would judge it: an admission can make a policy borrow, a
        # victim taken can end it.
        self._held_pools = {n for n, u in self.pools.items() if u.used}
        for use in self.pools.values():
            if not use.tree.start:
                use.tree.start = dict(use.tree.used)
        leaving = self.leaving
        self.borrowers = {
            p
            for p, use in self.policies.items()
            if use.used and self._still_borrows(use.used, leaving.get(p, NO_LIMIT), use.reserved)
        }
        self.pool_borrowers = {
            p
            for p in self._held_pools
            if len(self.pools[p].tree.names) > 1
            and self._still_borrows(
                self.pools[p].used, self.pool_leaving.get(p, NO_LIMIT), self.pools[p].capacity
            )
        }
        self._built = True

    def _uses(self, job: Holding) -> tuple[PoolUse, PolicyUse]:
        """Where a held job counts. A pool or policy an apply has since removed gets a ledger
        entry of its own: the job still holds what it holds until it exits."""
        pool = self.pools.get(job.pool)
        if pool is None:
            pool = self.pools[job.pool] = PoolUse(Pool(job.pool, "resource", {}, ()))
            pool.tree = TreeUse((job.pool,), {}, pool.used)
        policy = self.policies.get(job.policy)
        if policy is None:
            policy = self.policies[job.policy] = PolicyUse(
                Policy(job.policy, None, job.pool, 0, {}, None)
            )
        return pool, policy

    # -- changes ---------------------------------------------------------------------------------

    def take(
        self, pool: PoolUse, policy: PolicyUse, amounts: Amounts, np: bool, worker: str | None
    ) -> None:
        tree = pool.tree
        tree.version += 1
        pool_used, policy_used = pool.used, policy.used
        tree_used = tree.used if tree.used is not pool_used else None
        np_used = policy.np_used if np else None
        for key, value in amounts:
            pool_used[key] += value
            policy_used[key] += value
            if tree_used is not None:
                tree_used[key] += value
            if np_used is not None:
                np_used[key] += value
        if worker is not None:
            pool.busy.add(worker)
        if self._built:
            self._grew(pool, policy)

    def _grew(self, pool: PoolUse, policy: PolicyUse) -> None:
        """An admission grew what a policy and its pool use. One that now uses more than it
        reserved borrows from here on, so its running jobs become victims for a reclaim in
        this very cycle, as they would be in the next (judged only as of the cycle's start,
        a waiter that could take them back would wait one cycle for nothing). One that
        borrowed already may now give up, by priority, jobs it could not before."""
        name = policy.policy.name
        trees = self._policy_trees.get(name, _NO_TREES)  # where its running jobs are
        if name in self.borrowers:
            for tree in trees.values():
                tree.grown.append((False, name))
                tree.lending_changes += 1
                if tree is not pool.tree:  # (that one moved with the admission)
                    tree.version += 1
        elif self._still_borrows(policy.used, self.leaving.get(name, NO_LIMIT), policy.reserved):
            # (even with no running job: the jobs admitted in this cycle are looked at as
            # would-be victims, see Admission._would_preempt_admitted)
            self.borrowers.add(name)
            for tree in trees.values():
                tree.joins.append((False, name))
                tree.lending_changes += 1
                tree.version += 1
        if len(pool.tree.names) == 1:
            return
        name = pool.pool.name
        if name in self.pool_borrowers:
            pool.tree.grown.append((True, name))
            pool.tree.lending_changes += 1
        elif self._still_borrows(pool.used, self.pool_leaving.get(name, NO_LIMIT), pool.capacity):
            self.pool_borrowers.add(name)
            pool.tree.joins.append((True, name))
            pool.tree.lending_changes += 1

    def admit(self, job: int, route: Route, np: bool) -> str | None:
        """Account the job on the route; returns the worker it gets on a worker pool."""
        pool = self.pools[route.pool]
        worker = self.free_worker(pool)
        self.take(pool, self.policies[route.policy], route.demand, np, worker)
        pool.tree.admitted.append((job, route.priority))
        return worker

    def leave(self, job: Holding) -> None:
        """A job chosen as a victim (or being stopped): still counted until it exits, but no
        longer part of what its policy or pool borrows."""
        pool = self.pools.get(job.pool)
        if pool is not None:
            pool.tree.version += 1
        leaving, pool_leaving = self.leaving[job.policy], self.pool_leaving[job.pool]
        for key, value in job.amounts:
            leaving[key] += value
            pool_leaving[key] += value
        if not self._built:  # still building: borrowers are judged afterwards
            return
        borrowers = self.borrowers
        if job.policy in borrowers and not self._still_borrows(
            self.policies[job.policy].used, leaving, self._reserved(job.policy)
        ):
            borrowers.discard(job.policy)
            for tree in self._policy_trees.get(job.policy, {}).values():
                tree.lenders.append((False, job.policy))
                tree.lending_changes += 1
        if job.pool in self.pool_borrowers and not self._still_borrows(
            pool.used if pool is not None else NO_LIMIT,
            pool_leaving,
            pool.capacity if pool is not None else NO_LIMIT,
        ):
            self.pool_borrowers.discard(job.pool)
            if pool is not None:
                pool.tree.lenders.append((True, job.pool))
                pool.tree.lending_changes += 1

    @staticmethod
    def _still_borrows(
        used: Mapping[str, int], leaving: Mapping[str, int], own: Mapping[str, int]
    ) -> bool:
        """Whether `used` less `leaving` exceeds `own` on some key."""
        for key, value in used.items():  # noqa: SIM110 (a loop: no generator on a hot path)
            if value - leaving.get(key, 0) > own.get(key, 0):
                return True
        return False

    def _reserved(self, policy: str) -> Mapping[str, int]:
        known = self.config.policies.get(policy)
        return known.reserved if known is not None else NO_LIMIT

    def hold(self, job: int, route: Route, claim: bool = True) -> None:
        """Keep what is free of the route's demand for a job: a preemptor whose victims are
        exiting (`claim`), or a job others have passed too often. Nobody after it in the
        cycle's order can take that capacity."""
        tree = self.pools[route.pool].tree
        tree.version += 1
        used, capacity = tree.used, tree.capacity
        if claim:
            self.policies[route.policy].claimed[job] = (route.priority, route.demand)
        held_route, _, mine = tree.holds.setdefault(job, (route, claim, {}))
        tree.held_changes += 1
        for key, need in route.demand:
            limit = capacity.get(key)
            if limit is None:
                continue
            held = limit - used[key]
            if held > need:
                held = need
            if held > 0:
                used[key] += held
                tree.claimed[key] += held
                mine[key] = mine.get(key, 0) + held
        if any(mine.values()):
            floor = tree.held_floor
            if floor is None or held_route.priority < floor:
                tree.held_floor = held_route.priority

    def lower_claims(self, route: Route) -> list[int]:
        """Jobs of lower priority than the route's with capacity held for them in its tree
        (claimants, and jobs passed too often)."""
        tree = self.pools[route.pool].tree
        if tree.held_floor is None or tree.held_floor >= route.priority:
            return []
        return [
            job
            for job, (held_route, _, amounts) in tree.holds.items()
            if held_route.priority < route.priority and any(amounts.values())
        ]

    def fits_without_claims(self, route: Route, np: bool, claimants: list[int]) -> bool:
        """Whether the route would fit were the capacity held for `claimants` free."""
        holds = self.pools[route.pool].tree.holds
        freed: dict[str, int] = defaultdict(int)
        for job in claimants:
            for key, value in holds[job][2].items():
                freed[key] += value
        pool, policy = self.pools[route.pool], self.policies[route.policy]
        return fits_without(pool, policy, route.demand, np, freed, None)

    def release(self, tree: TreeUse, job: int) -> tuple[Route, bool]:
        """Free what is held for a job; returns the route it was held on and whether it was
        a claim."""
        route, claim, amounts = tree.holds.pop(job)
        tree.version += 1
        tree.held_changes += 1
        # (Whatever the flag kept: a job held first for being passed too often, then as a
        # claimant, keeps its first flag in `holds`.)
        self.policies[route.policy].claimed.pop(job, None)
        for key, value in amounts.items():
            tree.used[key] -= value
            tree.claimed[key] -= value
        held = [r.priority for r, _, left in tree.holds.values() if any(left.values())]
        tree.held_floor = min(held) if held else None
        return route, claim

    # -- questions -------------------------------------------------------------------------------

    # The pure questions (fit.py), as the ledger's: the cycle looks them up once.
    free_worker = staticmethod(free_worker)
    fits = staticmethod(fits)

    def check(
        self,
        route: Route,
        np: bool,
        removed_pool: dict[str, int] | None = None,
        removed_policy: dict[str, int] | None = None,
    ) -> Failure | None:
        """None when the route fits now (after taking away `removed_*`, the usage of would-be
        victims, from the tree and the policy); else the first level that binds and the deficit
        per key there."""
        pool, policy = self.pools[route.pool], self.policies[route.policy]
        if removed_pool is None and removed_policy is None:
            return fits(pool, policy, route.demand, np)
        if fits_without(pool, policy, route.demand, np, removed_pool, removed_policy):
            return None
        return failure_without(pool, policy, route.demand, np, removed_pool, removed_policy)

    def shortage(self, route: Route, np: bool) -> tuple[dict[str, int], dict[str, int]] | None:
        """What the route lacks per key, in its tree of pools and under its policy's limit, for
        victims to free; None when its non-preemptible reservation is what binds (victims
        cannot help)."""
        tree = self.pools[route.pool].tree
        policy = self.policies[route.policy]
        in_pool: dict[str, int] = {}
        in_policy: dict[str, int] = {}
        used, capacity, mine, limits = tree.used, tree.capacity, policy.used, policy.limit
        for key, need in route.demand:
            if np and policy.np_used[key] + need > policy.reserved.get(key, 0):
                return None
            over = used[key] + need - capacity.get(key, 0)
            if over > 0:
                in_pool[key] = over
            limit = limits.get(key)
            if limit is not None:
                over = mine[key] + need - limit
                if over > 0:
                    in_policy[key] = over
        return in_pool, in_policy

    def fit_at_start(self, route: Route) -> bool:
        """Whether the route fit its tree before this cycle's admissions took capacity."""
        tree = self.pools[route.pool].tree
        start, capacity = tree.start, tree.capacity
        for key, need in route.demand:  # noqa: SIM110 (a loop: no generator on a hot path)
            if start.get(key, 0) + need > capacity.get(key, 0):
                return False
        return True

    def within_reservation(self, route: Route) -> bool:
        """Whether the route's policy would stay inside its reservation with the job added,
        counting what its claimants of no lower priority will take once their victims exit: a
        second job of a policy whose first claim fills its reservation takes nothing back (it
        would borrow, and its victim could take the capacity back from it: preemption back
        and forth). A lower-priority claim does not stand in a higher-priority job's way."""
        policy = self.policies[route.policy]
        used, reserved = policy.used, policy.reserved
        claims = policy.claimed
        if claims:
            priority = route.priority
            claimed: dict[str, int] = defaultdict(int)
            for at, demand in claims.values():
                if at >= priority:
                    for key, need in demand:
                        claimed[key] += need
            for key, need in route.demand:
                if used[key] + claimed[key] + need > reserved.get(key, 0):
                    return False
            return True
        for key, need in route.demand:  # noqa: SIM110 (a loop: no generator on a hot path)
            if used[key] + need > reserved.get(key, 0):
                return False
        return True

    # -- pools sharing a tree: the same questions one level up --------------------------------

    def within_capacity(self, route: Route) -> bool:
        """Whether the route's own pool would stay inside its own capacity with the job added:
        then it may take back what other pools of its tree borrow from it (reclaim)."""
        pool = self.pools[route.pool]
        used, capacity = pool.used, pool.capacity
        return all(used[k] + need <= capacity.get(k, 0) for k, need in route.demand)


def _summed(jobs: list[Holding]) -> Amounts:
    """What the jobs hold together, keys in the order they first appear."""
    total: dict[str, int] = defaultdict(int)
    for job in jobs:
        for key, value in job.amounts:
            total[key] += value
    return tuple(total.items())
