"""The victim search of `Admission` (a base class of it, kept apart for size): a job that fits
nowhere looks for the fewest running jobs whose stopping lets it in (preemption.py), unless a
search for a job like it, no lower in priority and asking no less, found none since its tree
last changed in a way that could give it some (`Hopeless`); found victims are marked.
"""

from __future__ import annotations

from reconciler.scheduler.candidates import Candidates
from reconciler.scheduler.lanes import Lane
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Preempt, Queued
from reconciler.scheduler.preemption import Victims, victims_among
from reconciler.scheduler.usage import Failure, TreeUse

# Victim searches that found nothing, per (pool, policy, non-preemptible, batch): (priority,
# demand, the keys the tree lacked for it). While no policy or pool of the tree starts to
# borrow or borrows more (see the ledger's `joins` and `grown`), usage only grows and
# candidates only leave, so a waiter with no higher priority and no smaller demand on the same
# keys, short of the same keys, would find nothing either. (Short of another key too, it may:
# a policy that borrows only that key is a victim for it, see preemption.py.)
Hopeless = dict[tuple[str, str, bool, int], list[tuple[int, tuple[tuple[str, int], ...], int]]]


class VictimSearch:
    ledger: Ledger
    candidates: dict[int, Candidates]
    batches: set[int]
    hopeless: dict[int, tuple[tuple[int, int], Hopeless]]  # per tree

    def _victims(
        self, job: Queued, failures: list[tuple[Lane, Failure]], np: bool
    ) -> tuple[Lane, Victims, Candidates] | None:
        """Victims on the first route where some exist (nothing is marked yet)."""
        for lane, failure in failures:
            if failure.level not in ("pool", "limit"):
                continue
            candidates = self.candidates.get(id(lane.tree))
            if candidates is None or not candidates.jobs:
                continue
            found = self._search(job, lane, np, candidates)
            if found is not None:
                return lane, found, candidates
        return None

    def _search(self, job: Queued, lane: Lane, np: bool, candidates: Candidates) -> Victims | None:
        """The job's victims among the lane's tree's candidates, unless a search for a job of
        no lower priority and no greater demand on the same route found none since the tree
        last started to lend or grew (see `Hopeless`)."""
        tree, route = lane.tree, lane.route
        key = id(tree)
        stamp = (len(tree.joins), len(tree.grown))
        kept = self.hopeless.get(key)
        if kept is None or kept[0] != stamp:
            kept = self.hopeless[key] = (stamp, {})
        batch = job.batch
        where = (route.pool, route.policy, np, batch if batch in self.batches else 0)
        tried = kept[1].get(where)
        short = _short_of(tree, route.demand)
        if tried is None:
            tried = kept[1][where] = []
        elif tried and _dominated(tried, route.priority, route.demand, short):
            return None
        found = victims_among(self.ledger, route, np, batch, candidates)
        if found is None:
            tried.append((route.priority, route.demand, short))
        return found

    def _preempt(self, job: int, lane: Lane, found: Victims, candidates: Candidates) -> Preempt:
        """Mark the victims: they leave the candidates and what their policies borrow."""
        candidates.remove(found.jobs)
        leave = self.ledger.leave
        for victim in found.jobs:
            leave(victim)
        gone = tuple(sorted([victim.id for victim in found.jobs]))  # distinct jobs
        return Preempt(job, gone, lane.route.pool, found.why)


def _short_of(tree: TreeUse, demand: tuple[tuple[str, int], ...]) -> int:
    """The keys of `demand` the tree lacks for it, one bit per key in the demand's order (the
    demands `_dominated` compares have the same keys in the same order)."""
    used, capacity = tree.used, tree.capacity
    short, bit = 0, 1
    for key, need in demand:
        if used.get(key, 0) + need > capacity.get(key, 0):
            short |= bit
        bit <<= 1
    return short


def _dominated(
    tried: list[tuple[int, tuple[tuple[str, int], ...], int]],
    priority: int,
    demand: tuple[tuple[str, int], ...],
    short: int,
) -> bool:
    for p, d, s in tried:
        if p >= priority and s == short and len(d) == len(demand):
            if d == demand:
                return True
            # Not strict: the lengths are equal (above), and mypyc compiles a plain zip natively.
            for (key, need), (mine, want) in zip(d, demand):  # noqa: B905
                if key != mine or need > want:
                    break
            else:
                return True
    return False
