"""What phase 4 of `schedule` works over: each waiting job's lanes (its routes with the ledger
entries they touch) and its place in the order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from reconciler.scheduler.model import Queued, Route
from reconciler.scheduler.usage import PolicyUse, PoolUse, TreeUse


class Lane(NamedTuple):
    """A route with the ledger entries it touches, looked up once per cycle (see
    `queue_routes._Entries`)."""

    route: Route
    pool: PoolUse
    policy: PolicyUse
    tree: TreeUse


# (place, rank, submitted at, id, job, lanes, shape, claimant, run): the first four are the
# job's place in the order (place: 0 passed too often, 1 a claimant, 2 the rest; rank: minus
# its priority), flat so that the order is sorted one plain field at a time; `shape` is shared
# by look-alike jobs (same pools, policies and demand on every route); `run`: the jobs right
# after this one in the order with the same request, batch, submission time and bypass count,
# none of them held for (a batch's ranks, usually; an empty tuple when there are none), which
# `Admission.run` may decide together.
Waiting = tuple[int, int, float, int, Queued, tuple[Lane, ...], int, bool, Sequence[Queued]]

__all__ = ["Lane", "Waiting"]
