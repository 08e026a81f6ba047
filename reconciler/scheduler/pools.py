"""Use cases: `pools status` (capacity, reservations, usage, borrowing and queued demand per
pool and key, and each policy's share) and `scheduler run` (the loop, once or forever)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from reconciler.errors import PoolformError
from reconciler.scheduler.amounts import total
from reconciler.scheduler.context import SchedulerContext
from reconciler.scheduler.lifecycle import snapshot_of
from reconciler.scheduler.loop import CycleReport, LoopSettings, SchedulerLoop
from reconciler.scheduler.model import HOLDING, Snapshot
from reconciler.scheduler.routing import resolve
from reconciler.scheduler.store import StoreUnwritable


@dataclass(frozen=True)
class KeyStatus:
    key: str
    capacity: int
    reserved: int
    used: int
    borrowed: int
    queued: int


@dataclass(frozen=True)
class PolicyShare:
    name: str
    subject: str | None
    priority: int
    reserved: dict[str, int]
    limit: dict[str, int] | None
    used: dict[str, int]


@dataclass(frozen=True)
class PoolStatus:
    name: str
    kind: str
    keys: list[KeyStatus]
    policies: list[PolicyShare]
    running: int
    queued: int
    workers: list[tuple[str, int | None]] = field(default_factory=list)  # (worker, job)


def pool_status(snapshot: Snapshot, name: str) -> PoolStatus:
    """One pool's status in a snapshot (a pure function)."""
    config = snapshot.config
    pool = config.pools[name]
    holding = [h for h in snapshot.holding if h.pool == name]
    used = total(h.amounts for h in holding)
    queued_demand: dict[str, int] = {}
    queued = 0
    for job in snapshot.queued:
        routes = resolve(job.request, config)
        if not isinstance(routes, tuple):
            continue
        # Where `jobs list` lists it: its pool while it still routes there (a job of several
        # pools requeued where it ran), else the first route's, where the next cycle moves it.
        route = next((r for r in routes if r.pool == job.pool), routes[0])
        if route.pool == name:
            queued += 1
            for key, value in route.demand:
                queued_demand[key] = queued_demand.get(key, 0) + value
    shares: list[PolicyShare] = []
    reserved: dict[str, int] = {}
    borrowed: dict[str, int] = {}
    for policy_name in pool.policies:
        policy = config.policies[policy_name]
        mine = total(h.amounts for h in holding if h.policy == policy_name)
        if not policy.implicit:
            shares.append(
                PolicyShare(
                    policy.name,
                    policy.subject,
                    policy.priority,
                    dict(policy.reserved),
                    None if policy.limit is None else dict(policy.limit),
                    mine,
                )
            )
            for key, value in policy.reserved.items():
                reserved[key] = reserved.get(key, 0) + value
            for key, value in mine.items():
                over = value - policy.reserved.get(key, 0)
                if over > 0:
                    borrowed[key] = borrowed.get(key, 0) + over
    keys = sorted(set(pool.capacity) | set(used) | set(queued_demand))
    rows = [
        KeyStatus(
            k,
            pool.capacity.get(k, 0),
            reserved.get(k, 0),
            used.get(k, 0),
            borrowed.get(k, 0),
            queued_demand.get(k, 0),
        )
        for k in keys
    ]
    on_worker = {h.worker: h.id for h in holding if h.worker}
    workers = [(w.id, on_worker.get(w.id)) for w in pool.workers]
    return PoolStatus(name, pool.kind, rows, shares, len(holding), queued, workers)


@dataclass(frozen=True)
class DeletedPool:
    """A pool the applied configuration no longer has, whose jobs still run (an apply removed
    it: they run until they end, or until the scheduler stops one whose worker went)."""

    name: str
    jobs: list[int]  # the held jobs (admitted or running), by id


@dataclass(frozen=True)
class PoolsStatus:
    pools: list[PoolStatus]
    deleted: list[DeletedPool]


def pools_status(ctx: SchedulerContext, name: str | None = None) -> PoolsStatus:
    config = ctx.read_config()
    records = ctx.store.jobs(active=True)
    held: dict[str, list[int]] = {}
    for job in records:
        if job.status in HOLDING and job.pool and job.pool not in config.pools:
            held.setdefault(job.pool, []).append(job.id)
    deleted = [DeletedPool(pool, sorted(ids)) for pool, ids in sorted(held.items())]
    if name is not None and name not in config.pools:
        if name in held:  # deleted, but its jobs run: that is its status
            return PoolsStatus([], [d for d in deleted if d.name == name])
        known = ", ".join(sorted(config.pools)) or "none"
        raise PoolformError(f"no pool named {name} is applied (pools: {known})")
    snapshot = snapshot_of(config, records, 0, 0.0)
    names = [name] if name is not None else sorted(config.pools)
    return PoolsStatus([pool_status(snapshot, n) for n in names], deleted if name is None else [])


def run_scheduler(
    ctx: SchedulerContext,
    *,
    once: bool,
    interval: float,
    settings: LoopSettings,
    on_cycle: Callable[[CycleReport], None],
    should_stop: Callable[[], bool],
    sleep: Callable[[float], None],
    on_start: Callable[[], None] = lambda: None,
    announce: Callable[[str], None] = lambda line: None,
) -> None:
    """Cycles until `should_stop` (or one, with `once`). Running jobs are left running when
    it returns: a later run finds and reconciles them. `on_start` is called once this run
    holds the configuration's scheduler lock, before its first cycle.

    A cycle whose write the store's disk refuses (full: often a job's own log filled it) is
    said once, and tried again every `interval` by a loop made afresh, as a restarted
    scheduler's: nothing of the refused write was made, and the jobs it had started are found
    as after a kill -9. Ending instead would leave the running jobs' ends, cancels and SIGKILL
    deadlines unwatched until someone started the scheduler again."""

    def new_loop() -> SchedulerLoop:
        # The steady clock backs the wall clock only where the wall clock is the real one (a
        # test's injected clock decides alone).
        steady = time.monotonic if ctx.clock is time.time else None
        return SchedulerLoop(
            ctx.store,
            ctx.executor,
            ctx.read_config,
            ctx.clock,
            settings,
            ctx.mark_workers,
            steady,
        )

    with ctx.exclusive():
        on_start()
        loop = new_loop()
        refused: str | None = None
        while True:
            try:
                report = loop.cycle()
            except StoreUnwritable as error:
                if once:
                    raise
                if error.message != refused:
                    announce(
                        f"scheduler: {error.message}; nothing of this cycle was recorded; "
                        f"running jobs keep running; trying again every {interval:g}s"
                    )
                refused, loop = error.message, new_loop()
            else:
                if refused is not None:
                    announce("scheduler: the queue is written again; deciding again")
                    refused = None
                on_cycle(report)
            if once or should_stop():
                return
            sleep(interval)
