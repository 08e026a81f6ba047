"""Jobs watched for bypass on one tree at the same count, with no admission there in between,
share one entry of that tree's heap: room is then held for them in the order it would be held
for each alone, entries of jobs that may also use another tree included."""

from __future__ import annotations

from reconciler.scheduler.model import Route
from reconciler.scheduler.starvation import Bypasses
from reconciler.scheduler.usage import TreeUse


def _tree(name: str) -> TreeUse:
    return TreeUse((name,), {"gpu": 4000}, {})


def _route(pool: str) -> Route:
    return Route(pool, f"{pool}/*", (("gpu", 1000),), 0)


def test_room_is_held_in_watch_order_across_a_job_that_may_use_another_tree_too() -> None:
    """Limit 8; every job passed 7 times already, so one admission onto tree a reaches the
    bound for all of them: job 1 (tree a), job 2 (trees a and b), job 3 (tree a)."""
    a, b = _tree("a"), _tree("b")
    held: list[tuple[int, str]] = []
    bypasses = Bypasses(8, lambda job, route: held.append((job, route.pool)))
    bypasses.watch(1, 7, [(_route("a"), a)])
    bypasses.watch(2, 7, [(_route("a"), a), (_route("b"), b)])
    bypasses.watch(3, 7, [(_route("a"), a)])
    bypasses.admitted(a)
    assert held == [(1, "a"), (2, "a"), (2, "b"), (3, "a")]
    assert bypasses.counts() == {1: 8, 2: 8, 3: 8}


def test_jobs_watched_on_one_tree_between_admissions_reach_the_bound_together() -> None:
    a, b = _tree("a"), _tree("b")
    held: list[int] = []
    bypasses = Bypasses(2, lambda job, route: held.append(job))
    bypasses.watch(1, 0, [(_route("a"), a)])
    bypasses.watch(2, 0, [(_route("b"), b)])  # another tree between them
    bypasses.watch(3, 0, [(_route("a"), a)])
    bypasses.admitted(a)
    bypasses.watch(4, 0, [(_route("a"), a)])  # after an admission: counted from here
    bypasses.admitted(a)
    assert held == [1, 3]
    assert bypasses.counts() == {1: 2, 3: 2, 4: 1}
