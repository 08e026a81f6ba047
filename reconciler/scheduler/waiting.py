"""Why a job that does not fit is waiting: one reason from the table, computed from the
cycle's ledger (by `schedule` for every job it leaves queued, and by `jobs show`)."""

from __future__ import annotations

from collections.abc import Mapping

from reconciler.scheduler.amounts import STEP_RUN, WORKER
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Route
from reconciler.scheduler.reasons import Reason, ReasonCode, reason
from reconciler.scheduler.usage import Failure


def explain_failure(route: Route, failure: Failure, ledger: Ledger) -> Reason:
    """`failure`: the route's, as the ledger stands (`Ledger.check` or `fits`)."""
    deficit = dict(failure.deficit)  # units per key, shown as amounts in the message
    if failure.level == "reserved":
        return reason(ReasonCode.RESERVATION_FULL, policy=route.policy, deficit=deficit)
    if failure.level == "limit":
        return reason(ReasonCode.POLICY_LIMIT_REACHED, policy=route.policy, deficit=deficit)
    if failure.level == "overcommitted":
        return reason(ReasonCode.OVERCOMMITTED, pool=route.pool, excess=deficit)
    tree = ledger.pools[route.pool].tree
    first_held = tree.holder
    if first_held is not None and _held_covers(tree.claimed, failure):
        holder, claim = first_held
        if claim:
            return reason(
                ReasonCode.RESERVED_FOR_PREEMPTOR,
                pool=route.pool,
                preemptor=holder,
                deficit=deficit,
            )
        return reason(ReasonCode.RESERVED_FOR_HEAD, pool=route.pool, head=holder, deficit=deficit)
    ahead: list[int] = []  # the first four admitted in this cycle with a higher priority
    priority = route.priority
    for admitted, higher in tree.admitted:
        if higher > priority:
            ahead.append(admitted)
            if len(ahead) == 4:
                break
    if ahead and ledger.fit_at_start(route):
        shown = [str(i) for i in ahead[:3]] + (["more"] if len(ahead) > 3 else [])
        return reason(
            ReasonCode.BLOCKED_BY_HIGHER_PRIORITY, pool=route.pool, jobs=shown, deficit=deficit
        )
    pool = ledger.config.pools[route.pool]
    keys = failure.keys
    if WORKER in keys:
        return reason(ReasonCode.NO_WORKER_FREE, pool=route.pool, workers=len(pool.workers))
    if keys == {STEP_RUN} and len(tree.names) == 1:
        limit = pool.capacity.get(STEP_RUN, 0) // 1000
        return reason(ReasonCode.STEP_RUN_EXHAUSTED, pool=route.pool, limit=limit)
    if len(tree.names) > 1:
        others = [name for name in tree.names if name != route.pool]
        return reason(
            ReasonCode.WAITING_FOR_CAPACITY,
            pool=route.pool,
            deficit=deficit,
            shared=f" (with the pools it shares capacity with: {', '.join(others)})",
        )
    return reason(ReasonCode.WAITING_FOR_CAPACITY, pool=route.pool, deficit=deficit)


def _held_covers(held: Mapping[str, int], failure: Failure) -> bool:
    """Whether the route would fit but for capacity held for other jobs. The failure is of
    level "pool" and current: nothing else binds (no limit, reservation or overcommitted
    key), so it would fit with the held capacity free exactly when that covers the deficit
    on every key short."""
    for key, short in failure.deficit:  # noqa: SIM110 (a loop: no generator on a hot path)
        if held.get(key, 0) < short:
            return False
    return True
