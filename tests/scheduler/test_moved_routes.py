"""`schedule` reports the pool a queued job waits for when an apply moved its route away from
the pool stored for it (Decisions.moves): the loop writes it, so `jobs list --pool`, `jobs
cancel --pool` and `pools status` agree. The decision stays pure: the stored pool comes in
the snapshot, the new one goes out in the decisions."""

from __future__ import annotations

from dataclasses import replace

from reconciler.scheduler.model import Queued
from reconciler.scheduler.pools import pool_status
from reconciler.scheduler.reasons import Reason
from reconciler.scheduler.routing import resolve
from reconciler.scheduler.schedule import schedule
from tests.scheduler.builders import config, holding, policy, queued, request, snapshot

POOLS = {"a": {"gpu": 1}, "b": {"gpu": 1}, "c": {"gpu": 1}}


def waiting_in(pool: str, job_id: int, **kwargs: object) -> Queued:
    return replace(queued(job_id, subject="dev", gpu=1, **kwargs), pool=pool)


def test_a_queued_job_whose_policy_moved_is_reported_with_its_new_pool() -> None:
    cfg = config(resource_pools=POOLS, policies={"dev": policy("b", "dev")})
    full = [holding(9, "b", "dev", gpu=1)]  # b is full: job 1 stays queued there

    decisions = schedule(snapshot(cfg, [waiting_in("a", 1)], full), 0.0)

    assert 1 in decisions.reasons and decisions.moves == {1: "b"}


def test_every_rank_of_a_batch_moves_and_an_admitted_one_too() -> None:
    cfg = config(resource_pools=POOLS, policies={"dev": policy("b", "dev")})
    asked = request(subject="dev", gpu=1)  # a batch's ranks share one request object
    ranks = [Queued(job, asked, 5.0, 1, pool="a") for job in (1, 2, 3)]

    decisions = schedule(snapshot(cfg, ranks), 0.0)

    assert [admit.job for admit in decisions.admits] == [1]  # b has room for one
    assert decisions.moves == {1: "b", 2: "b", 3: "b"}


def test_a_job_still_routed_to_its_pool_among_others_keeps_it() -> None:
    policies = {"dev-a": policy("a", "dev"), "dev-b": policy("b", "dev")}
    cfg = config(resource_pools=POOLS, policies=policies)
    full = [holding(8, "a", "dev-a", gpu=1), holding(9, "b", "dev-b", gpu=1)]

    decisions = schedule(snapshot(cfg, [waiting_in("b", 1), waiting_in("a", 2)], full), 0.0)

    assert set(decisions.reasons) == {1, 2} and decisions.moves == {}


def test_a_job_whose_pool_none_of_its_routes_names_moves_to_the_first_as_submit_names_it() -> None:
    policies = {"dev-a": policy("a", "dev"), "dev-b": policy("b", "dev")}
    cfg = config(resource_pools=POOLS, policies=policies)
    full = [holding(8, "a", "dev-a", gpu=1), holding(9, "b", "dev-b", gpu=1)]
    routes = resolve(request(subject="dev", gpu=1), cfg)
    assert not isinstance(routes, Reason)

    decisions = schedule(snapshot(cfg, [waiting_in("c", 1)], full), 0.0)

    assert decisions.moves == {1: routes[0].pool}


def test_a_job_no_route_holds_any_more_is_rejected_and_not_moved() -> None:
    cfg = config(resource_pools=POOLS, policies={"ops": policy("b", "ops")})

    decisions = schedule(snapshot(cfg, [waiting_in("a", 1)]), 0.0)

    assert [reject.job for reject in decisions.rejects] == [1] and decisions.moves == {}


def test_a_job_whose_route_stands_is_not_reported() -> None:
    cfg = config(resource_pools=POOLS, policies={"dev": policy("a", "dev")})
    full = [holding(9, "a", "dev", gpu=1)]

    decisions = schedule(snapshot(cfg, [waiting_in("a", 1), queued(2, subject="dev")], full), 0.0)

    assert decisions.moves == {}  # job 2: no pool stored (None), nothing to compare


def test_pools_status_counts_a_queued_job_where_jobs_list_lists_it() -> None:
    """Its stored pool while it routes there (a job of two pools queued again where it ran),
    else its first route's, where the next cycle moves it (as `jobs list` will list it)."""
    policies = {"dev-a": policy("a", "dev"), "dev-b": policy("b", "dev")}
    cfg = config(resource_pools=POOLS, policies=policies)
    routes = resolve(request(subject="dev", gpu=1), cfg)
    assert not isinstance(routes, Reason)
    first, other = routes[0].pool, routes[1].pool
    queue = snapshot(cfg, [waiting_in(other, 1), waiting_in("c", 2)])

    counted = {name: pool_status(queue, name).queued for name in ("a", "b", "c")}

    assert counted == {first: 1, other: 1, "c": 0}
