"""The cycle's cheap answers about held room are the answers of the full questions they stand
for: on random snapshots (pools sharing capacity, claimants, jobs passed too often), each time
the cycle asks, the full question is asked beside it and must agree.

- "would the route fit were the held room free" from the failure's deficit against what is
  held, as a fit test with the held room taken away says;
- "is it held out only by room held for another job" (its reason), the same;
- the jobs room is held for that a job would go before, found without the scan over every
  hold when no claim of its priority there was made after it, as the scan finds.
"""

from __future__ import annotations

import pytest

from reconciler.scheduler import closed_trees as closed_trees_module
from reconciler.scheduler.admission import Admission
from reconciler.scheduler.fit import fits_without
from reconciler.scheduler.lanes import Lane
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Queued, Route
from reconciler.scheduler.reasons import Reason, ReasonCode
from reconciler.scheduler.schedule import schedule
from reconciler.scheduler.usage import Failure
from tests.scheduler.test_cycle_shortcuts import random_snapshot

SEEDS = range(300)


def _fits_with_held_room_free(ledger: Ledger, route: Route, np: bool) -> bool:
    pool, policy = ledger.pools[route.pool], ledger.policies[route.policy]
    return fits_without(pool, policy, route.demand, np, pool.tree.claimed, None)


def test_the_held_room_test_from_the_deficit_is_a_fit_test_with_the_held_room_free(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[bool] = []
    cheap = Admission._held_room_might_fit

    def both(self: Admission, lane: Lane, failure: Failure) -> bool:
        found = cheap(self, lane, failure)
        floor = lane.tree.held_floor
        if floor is not None and floor <= lane.route.priority:
            # The failure's route, preemptible or not: a "pool" failure means neither binds.
            for np in (False, True):
                if self.ledger.fits(lane.pool, lane.policy, lane.route.demand, np) == failure:
                    assert found == _fits_with_held_room_free(self.ledger, lane.route, np)
            asked.append(found)
        return found

    monkeypatch.setattr(Admission, "_held_room_might_fit", both)
    for seed in SEEDS:
        schedule(random_snapshot(seed), 100.0)
    assert True in asked and False in asked  # both answers were compared


def test_a_reason_held_out_by_held_room_is_given_where_a_fit_with_it_free_would_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compared: list[bool] = []
    explain = closed_trees_module.explain_failure

    def both(route: Route, failure: Failure, ledger: Ledger) -> Reason:
        why = explain(route, failure, ledger)
        tree = ledger.pools[route.pool].tree
        if failure.level == "pool" and tree.holder is not None:
            held_out = why.code in (
                ReasonCode.RESERVED_FOR_PREEMPTOR,
                ReasonCode.RESERVED_FOR_HEAD,
            )
            assert held_out == _fits_with_held_room_free(ledger, route, False)
            compared.append(held_out)
        return why

    monkeypatch.setattr(closed_trees_module, "explain_failure", both)
    for seed in SEEDS:
        schedule(random_snapshot(seed), 100.0)
    assert True in compared and False in compared


def test_the_jobs_a_job_would_go_before_are_those_a_scan_of_every_hold_finds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    same_priority: list[bool] = []  # per comparison: a claimant of its priority went behind
    cheap = Admission._behind

    def both(self: Admission, job: Queued, lane: Lane) -> list[int]:
        found = cheap(self, job, lane)
        priority, mine = lane.route.priority, (job.submitted_at, job.id)
        scanned = self.ledger.lower_claims(lane.route)
        lower = len(scanned)
        for holder, (route, claim, amounts) in lane.tree.holds.items():
            if claim and route.priority == priority and any(amounts.values()):
                at = self.claimed_at.get(holder)
                if at is not None and (at, holder) > mine:
                    scanned.append(holder)
        assert found == scanned
        same_priority.append(len(scanned) > lower)
        return found

    monkeypatch.setattr(Admission, "_behind", both)
    for seed in range(1000):
        schedule(random_snapshot(seed), 100.0)
    assert True in same_priority and False in same_priority
