"""A tree's would-be victims for one cycle, in victim order, with the views the victim search
(preemption.py) walks instead of the whole list."""

from __future__ import annotations

from collections.abc import Sequence
from heapq import merge

from reconciler.scheduler.amounts import Amounts
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Holding
from reconciler.scheduler.usage import TreeUse

_KEYS: dict[Amounts, frozenset[str]] = {}


def keys_of(amounts: Amounts) -> frozenset[str]:
    found = _KEYS.get(amounts)
    if found is None:
        if len(_KEYS) > 10_000:
            _KEYS.clear()
        found = _KEYS[amounts] = frozenset(k for k, _ in amounts)
    return found


def victim_order(job: Holding) -> tuple[int, float, int]:
    """Lowest priority first, then most recently admitted, then highest id."""
    return (job.priority, -job.admitted_at, -job.id)


class Candidates:
    """A tree's would-be victims for one cycle: preemptible running jobs, not stopping, in
    `victim_order`, with the views a search walks instead of the whole list:

    - `own[policy]`: the policy's jobs (the second pass: its own lower priority work);
    - `lending()`: jobs of policies (or pools) that borrow: only those can be taken in the
      first pass. Victims taken end borrowing, admissions start it (the ledger lists both
      per tree, in `lenders` and `joins`); the view follows;
    - `givable(keys)`: of those, the jobs their policy (or pool) could give up alone by
      priority on `keys` (keeping its reservation). A job found not givable alone stays so
      until its policy (or pool) uses more (an admission: the ledger's `grown`), when it
      comes back.
    """

    def __init__(self, ledger: Ledger, ranked: Sequence[Holding], tree: TreeUse | None = None):
        self.ledger = ledger
        self.tree = tree  # the tree the jobs run in: its lists say who lends, as they change
        self.jobs = list(ranked)
        self.own: dict[str, list[Holding]] = {}
        for job in self.jobs:
            self.own.setdefault(job.policy, []).append(job)
        self._lending: list[Holding] | None = None
        self._stamp: object = None
        self._givable: dict[frozenset[str], list[Holding]] = {}
        # Per view of `givable`, the jobs dropped from it, per (pool, policy).
        self._dropped: dict[frozenset[str], dict[tuple[str, str], list[Holding]]] = {}
        self._joined = self._grown = 0
        self._changes = -1
        if tree is not None:
            self._joined, self._grown = len(tree.joins), len(tree.grown)

    def lending(self) -> list[Holding]:
        tree = self.tree
        if tree is not None and self._changes == tree.lending_changes and self._lending is not None:
            return self._lending  # nothing changed who lends since the last look
        found = self._refresh()
        if tree is not None:
            self._changes = tree.lending_changes
        return found

    def _refresh(self) -> list[Holding]:
        tree = self.tree
        if tree is not None:
            if len(tree.joins) != self._joined:
                # Someone started to lend: rare (a policy or pool crossing its reservation),
                # so every view starts again (what was dropped is only a shortcut).
                self._joined, self._grown = len(tree.joins), len(tree.grown)
                self._lending = None
                self._givable.clear()
                self._dropped.clear()
            elif len(tree.grown) != self._grown:
                self._take_back(tree.grown[self._grown :])
                self._grown = len(tree.grown)
        if self._lending is None:
            self._lending = [job for job in self.jobs if self._lends(job)]
            self._stamp = self._seen()
            return self._lending
        stamp = self._seen()
        if stamp == self._stamp:
            return self._lending
        lends = self._lends
        if self.tree is not None and isinstance(self._stamp, int):
            # Only jobs of the policies and pools that stopped since can have stopped lending.
            stopped = self.tree.lenders[self._stamp :]
            policies = {name for pool, name in stopped if not pool}
            pools = {name for pool, name in stopped if pool}
            self._lending = [
                job
                for job in self._lending
                if (job.policy not in policies and job.pool not in pools) or lends(job)
            ]
            for keys, jobs in self._givable.items():
                self._givable[keys] = [
                    job
                    for job in jobs
                    if (job.policy not in policies and job.pool not in pools) or lends(job)
                ]
        else:
            self._lending = [job for job in self._lending if lends(job)]
            for keys, jobs in self._givable.items():
                self._givable[keys] = [job for job in jobs if lends(job)]
        self._stamp = stamp
        return self._lending

    def _take_back(self, grown: list[tuple[bool, str]]) -> None:
        """Jobs dropped from a `givable` view whose policy or pool has grown since come back
        (those that no longer lend are filtered out by `lending`, as any other)."""
        policies = {name for pool, name in grown if not pool}
        pools = {name for pool, name in grown if pool}
        for keys, dropped in self._dropped.items():
            back: list[Holding] = []
            for where in [w for w in dropped if w[0] in pools or w[1] in policies]:
                back.extend(dropped.pop(where))
            back = [job for job in back if self._lends(job)]
            if back:
                back.sort(key=victim_order)
                self._givable[keys] = list(merge(self._givable[keys], back, key=victim_order))

    def _seen(self) -> object:
        """How far the changes to who lends have been taken in."""
        if self.tree is not None:
            return len(self.tree.lenders)
        return (len(self.ledger.borrowers), len(self.ledger.pool_borrowers))

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
        if found is not None:
            _without(found, (job,))
            self._dropped.setdefault(keys, {}).setdefault((job.pool, job.policy), []).append(job)

    def remove(self, victims: Sequence[Holding]) -> None:
        """Victims leave every view. They come from the front (victim order), so removing
        them one by one costs little; only the lists that hold them are touched."""
        _without(self.jobs, victims)
        policies = [victims[0].policy] if len(victims) == 1 else {job.policy for job in victims}
        for policy in policies:
            found = self.own.get(policy)
            if found is not None:
                _without(found, victims)
        if self._lending is not None:
            _without(self._lending, victims)
        for jobs in self._givable.values():
            _without(jobs, victims)
        for dropped in self._dropped.values():  # nor may a victim come back with its policy
            for victim in victims:
                found = dropped.get((victim.pool, victim.policy))
                if found:
                    _without(found, (victim,))


def _without(jobs: list[Holding], victims: Sequence[Holding]) -> None:
    for victim in victims:
        for index, job in enumerate(jobs):
            if job is victim:
                del jobs[index]
                break
