"""`schedule` reports the priority a queued job is ordered by when an apply changed it from the
one stored for it (Decisions.priorities): the loop writes it, so `jobs list` and `jobs show`
show the order the cycle uses. The decision stays pure: the stored priority comes in the
snapshot, the new one goes out in the decisions."""

from __future__ import annotations

from dataclasses import replace

from reconciler.scheduler.model import Queued
from reconciler.scheduler.schedule import schedule
from tests.scheduler.builders import config, holding, policy, queued, request, snapshot

POOLS = {"a": {"gpu": 1}, "b": {"gpu": 1}}
FULL = [holding(9, "a", "dev", gpu=1)]  # a is full: the queued jobs stay queued


def stored(job_id: int, pool: str, was: int, **kwargs: object) -> Queued:
    """A queued job of subject dev as stored: routed to `pool` at priority `was`."""
    return replace(queued(job_id, subject="dev", gpu=1, **kwargs), pool=pool, priority=was)


def test_a_queued_job_whose_policy_priority_changed_is_reported_with_the_new_one() -> None:
    cfg = config(resource_pools=POOLS, policies={"dev": policy("a", "dev", priority=50)})

    decisions = schedule(snapshot(cfg, [stored(1, "a", 5), stored(2, "a", 50)], FULL), 0.0)

    assert set(decisions.reasons) == {1, 2}
    assert decisions.priorities == {1: 50} and decisions.moves == {}


def test_a_job_that_gave_its_own_priority_keeps_it() -> None:
    cfg = config(resource_pools=POOLS, policies={"dev": policy("a", "dev", priority=50)})

    decisions = schedule(snapshot(cfg, [stored(1, "a", 9, priority=9)], FULL), 0.0)

    assert decisions.priorities == {}


def test_every_rank_of_a_batch_moved_to_a_policy_of_another_priority_takes_it() -> None:
    cfg = config(resource_pools=POOLS, policies={"dev": policy("b", "dev", priority=7)})
    asked = request(subject="dev", gpu=1)  # a batch's ranks share one request object
    ranks = [Queued(job, asked, 5.0, 1, pool="a", priority=5) for job in (1, 2, 3)]

    decisions = schedule(snapshot(cfg, ranks), 0.0)

    assert [admit.job for admit in decisions.admits] == [1]  # b has room for one
    assert decisions.moves == {1: "b", 2: "b", 3: "b"}
    assert decisions.priorities == {1: 7, 2: 7, 3: 7}
