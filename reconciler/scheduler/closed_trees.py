"""Reasons kept per tree version, and closed trees: the part of `Admission` (a base class of
it, kept apart for size) that lets the rest of a deep queue get its reasons without a full
look.

A tree (pools sharing one capacity) is *closed* once no queued job fits any more (its free
capacity is below what each of them asks of a key all of them ask for) and no victim is left
that a later job could take by priority, nor room held for a lower-priority claimant: later
jobs there (lower priority, in order) only get their reason, unless one could take capacity
back (reclaim), which is checked per job. Reasons are computed once per tree version and what
they depend on.
"""

from __future__ import annotations

from reconciler.scheduler.candidates import Candidates
from reconciler.scheduler.fit import fits
from reconciler.scheduler.lanes import Lane
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Queued
from reconciler.scheduler.reasons import Reason
from reconciler.scheduler.usage import Failure
from reconciler.scheduler.waiting import explain_failure


class ClosedTrees:
    ledger: Ledger
    candidates: dict[int, Candidates]

    def _explain(self, lane: Lane, failure: Failure) -> Reason:
        """The reason for `failure` on `lane`, computed once per tree version and what it
        depends on: for capacity, the demand and priority; for the policy, who and how much."""
        tree, route = lane.tree, lane.route
        if tree.memo_version != tree.version:
            tree.memo.clear()
            tree.memo_version = tree.version
        if failure.level == "pool":
            key: object = ("pool", failure.deficit, route.demand, route.priority, route.pool)
        else:
            key = (failure.level, failure.deficit, route.policy, route.pool)
        found = tree.memo.get(key)
        if found is None:
            found = tree.memo[key] = explain_failure(route, failure, self.ledger)
        assert isinstance(found, Reason)
        return found

    def _check_closed(self, lane: Lane, job: Queued, failure: Failure) -> None:
        """After a single-route job failed: is its tree closed to everything after it?"""
        tree = lane.tree
        if tree.checked == tree.version or tree.mixed or tree.floor is None:
            return
        tree.checked = tree.version
        capacity, used = tree.capacity, tree.used
        if not any(capacity.get(k, 0) - used[k] < least for k, least in tree.floor.items()):
            return  # some later job might still fit
        found = self.candidates.get(id(tree))
        if found is not None and found.jobs and found.jobs[0].priority < lane.route.priority:
            return  # a later job might still take a lower-priority victim
        if self.ledger.lower_claims(lane.route):
            return  # a later job might still take room held for a lower-priority claimant
        tree.dead = tree.version

    def _closed(self, job: Queued, lane: Lane, np: bool, shape: int) -> Reason | None:
        """The reason of a job in a closed tree, or None when it might take capacity back
        (reclaim) and so needs the full look."""
        ledger = self.ledger
        found = self.candidates.get(id(lane.tree))
        if found is not None and found.jobs and found.lending():
            route = lane.route
            if ledger.within_reservation(route):
                return None
            if len(lane.tree.names) > 1 and ledger.within_capacity(route):
                return None
        failure = self._failure_of(lane, np, shape)
        return self._explain(lane, failure)

    def _failure_of(self, lane: Lane, np: bool, shape: int) -> Failure:
        """What a one-route job of this form (`shape`: its pool, policy and demand) lacks; the
        form's number stands for the three in the key (cheaper to hash than the demand)."""
        tree, route = lane.tree, lane.route
        if tree.memo_version != tree.version:
            tree.memo.clear()
            tree.memo_version = tree.version
        key = ("failure", shape, np)
        found = tree.memo.get(key)
        if found is None:
            found = tree.memo[key] = fits(lane.pool, lane.policy, route.demand, np)
        assert isinstance(found, Failure)  # nothing fits a closed tree
        return found
