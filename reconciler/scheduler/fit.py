"""Whether a demand fits a pool's tree and a policy now, and if not, where and by how much:
pure questions over one cycle's usage (usage.py), which the ledger asks for its routes."""

from __future__ import annotations

from reconciler.scheduler.amounts import WORKER, Amounts
from reconciler.scheduler.usage import Failure, PolicyUse, PoolUse

# A failure made as the tuple it is: the question every queued job asks makes one, and the
# named tuple's own constructor is a Python function in between.
_new = tuple.__new__


def free_worker(pool: PoolUse) -> str | None:
    if pool.pool.kind != "worker":
        return None
    busy = pool.busy
    return next((w.id for w in pool.pool.workers if w.id not in busy), None)


def fits(pool: PoolUse, policy: PolicyUse, demand: Amounts, np: bool) -> Failure | None:
    """None when `demand` fits now; else the first level that binds and the deficit per key
    there. The question every queued job asks."""
    tree = pool.tree
    used, capacities, mine, limits = tree.used, tree.capacity, policy.used, policy.limit
    # One pass: what binds at each level, kept only when something does.
    over: list[tuple[str, int]] | None = None
    limited: list[tuple[str, int]] | None = None
    reserved: list[tuple[str, int]] | None = None
    overcommitted: list[tuple[str, int]] | None = None
    fails = False
    for key, need in demand:
        capacity = capacities.get(key, 0)
        now = used[key]
        if now > capacity:
            if overcommitted is None:
                overcommitted = []
            overcommitted.append((key, now - capacity))
            fails = fails or now + need > capacity
        elif now + need > capacity:
            if over is None:
                over = []
            over.append((key, now + need - capacity))
            fails = True
        limit = limits.get(key)
        if limit is not None and mine[key] + need > limit:
            if limited is None:
                limited = []
            limited.append((key, mine[key] + need - limit))
            fails = True
        if np:
            guaranteed = policy.reserved.get(key, 0)
            if policy.np_used[key] + need > guaranteed:
                if reserved is None:
                    reserved = []
                reserved.append((key, policy.np_used[key] + need - guaranteed))
                fails = True
    if not fails:
        if pool.pool.kind == "worker" and free_worker(pool) is None:
            return Failure("pool", ((WORKER, 0),))
        return None
    if reserved:
        return _new(Failure, ("reserved", tuple(reserved)))
    if limited:
        return _new(Failure, ("limit", tuple(limited)))
    if overcommitted:
        return _new(Failure, ("overcommitted", tuple(overcommitted)))
    return _new(Failure, ("pool", tuple(over or ())))


def fits_without(
    pool: PoolUse,
    policy: PolicyUse,
    demand: Amounts,
    np: bool,
    removed_pool: dict[str, int] | None,
    removed_policy: dict[str, int] | None,
) -> bool:
    """Whether `demand` fits once `removed_*` (would-be victims' usage) is taken away from the
    tree and the policy."""
    tree = pool.tree
    for key, need in demand:
        used = tree.used[key] - (removed_pool.get(key, 0) if removed_pool else 0)
        if used + need > tree.capacity.get(key, 0):
            return False
        limit = policy.limit.get(key)
        if limit is not None:
            mine = policy.used[key] - (removed_policy.get(key, 0) if removed_policy else 0)
            if mine + need > limit:
                return False
        if np and policy.np_used[key] + need > policy.reserved.get(key, 0):
            return False
    return True


def failure_without(
    pool: PoolUse,
    policy: PolicyUse,
    demand: Amounts,
    np: bool,
    removed_pool: dict[str, int] | None,
    removed_policy: dict[str, int] | None,
) -> Failure:
    """What binds, `fits` with `removed_*` taken away (when `fits_without` said no)."""
    tree = pool.tree
    over: list[tuple[str, int]] = []
    limited: list[tuple[str, int]] = []
    reserved: list[tuple[str, int]] = []
    overcommitted: list[tuple[str, int]] = []
    for key, need in demand:
        capacity = tree.capacity.get(key, 0)
        used = tree.used[key] - (removed_pool.get(key, 0) if removed_pool else 0)
        if used > capacity and not removed_pool:
            overcommitted.append((key, used - capacity))
        elif used + need > capacity:
            over.append((key, used + need - capacity))
        limit = policy.limit.get(key)
        if limit is not None:
            mine = policy.used[key] - (removed_policy.get(key, 0) if removed_policy else 0)
            if mine + need > limit:
                limited.append((key, mine + need - limit))
        if np:
            guaranteed = policy.reserved.get(key, 0)
            if policy.np_used[key] + need > guaranteed:
                reserved.append((key, policy.np_used[key] + need - guaranteed))
    if reserved:
        return Failure("reserved", tuple(reserved))
    if limited:
        return Failure("limit", tuple(limited))
    if overcommitted:
        return Failure("overcommitted", tuple(overcommitted))
    return Failure("pool", tuple(over))
