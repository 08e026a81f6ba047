"""The apply walker's contract: order, parallelism, retries, and what happens on failure."""

from __future__ import annotations

import threading
import time

import pytest

from providers.protocol import ErrorKind, ProviderError
from reconciler.apply import RetryPolicy, walk_plan
from reconciler.plan.model import Action, Plan, ResourceChange


def plan_of(edges: list[tuple[str, str]], nodes: list[str]) -> Plan:
    changes = tuple(ResourceChange(n, "resource_pool", Action.CREATE, "new") for n in nodes)
    return Plan("d" * 64, "L", 0, changes, (tuple(nodes),), tuple(edges))


def no_sleep() -> RetryPolicy:
    return RetryPolicy(sleep=lambda s: None, random=lambda: 0.5)


def test_dependencies_finish_before_dependents_start() -> None:
    plan = plan_of([("a", "b"), ("b", "c"), ("a", "d")], ["a", "b", "c", "d"])
    log: list[tuple[str, str]] = []
    lock = threading.Lock()

    def execute(change: ResourceChange) -> None:
        with lock:
            log.append(("start", change.address))
        time.sleep(0.01)
        with lock:
            log.append(("end", change.address))

    result = walk_plan(plan, execute, parallelism=4, retry=no_sleep())
    assert result.ok and sorted(result.done) == ["a", "b", "c", "d"]
    for before, after in plan.edges:
        assert log.index(("end", before)) < log.index(("start", after))


def test_independent_changes_run_in_parallel_up_to_the_bound() -> None:
    nodes = [f"n{i}" for i in range(12)]
    plan = plan_of([], nodes)
    active = 0
    peak = 0
    lock = threading.Lock()

    def execute(change: ResourceChange) -> None:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        time.sleep(0.02)
        with lock:
            active -= 1

    assert walk_plan(plan, execute, parallelism=4, retry=no_sleep()).ok
    assert peak == 4


def test_retryable_errors_are_retried_with_growing_jittered_backoff() -> None:
    plan = plan_of([], ["a"])
    calls = 0
    slept: list[float] = []

    def execute(change: ResourceChange) -> None:
        nonlocal calls
        calls += 1
        if calls < 4:
            raise ProviderError(ErrorKind.RETRYABLE, "throttled")

    policy = RetryPolicy(base=0.1, cap=10, sleep=slept.append, random=lambda: 1.0)
    events: list[dict[str, object]] = []
    result = walk_plan(plan, execute, retry=policy, emit=events.append)
    assert result.ok and calls == 4
    assert slept == [0.1, 0.2, 0.4]
    assert [e["attempt"] for e in events if e["type"] == "retry"] == [1, 2, 3]


def test_retries_give_up_after_the_attempt_budget() -> None:
    plan = plan_of([], ["a"])

    def execute(change: ResourceChange) -> None:
        raise ProviderError(ErrorKind.RETRYABLE, "throttled")

    result = walk_plan(plan, execute, retry=RetryPolicy(attempts=3, sleep=lambda s: None))
    assert list(result.failed) == ["a"] and "throttled" in result.failed["a"]


def test_a_permanent_error_stops_new_work_and_skips_dependents_once() -> None:
    # a -> b -> c, and x independent but queued behind the failure with parallelism 1
    plan = plan_of([("a", "b"), ("b", "c")], ["a", "x", "b", "c"])

    def execute(change: ResourceChange) -> None:
        if change.address == "a":
            raise ProviderError(ErrorKind.PERMANENT, "invalid instance type")

    events: list[dict[str, object]] = []
    result = walk_plan(plan, execute, parallelism=1, retry=no_sleep(), emit=events.append)
    assert result.failed == {"a": "invalid instance type (permanent)"}
    assert result.skipped == {"b": "a", "c": "a"}
    assert result.not_started == ["x"]
    assert sorted(e["address"] for e in events if e["type"] == "skipped") == ["b", "c"]


@pytest.mark.parametrize("kind", [ErrorKind.CAPACITY, ErrorKind.PERMANENT])
def test_in_flight_changes_finish_when_one_fails(kind: ErrorKind) -> None:
    plan = plan_of([], ["fails", "slow"])
    finished = threading.Event()

    def execute(change: ResourceChange) -> None:
        if change.address == "fails":
            raise ProviderError(kind, "no")
        time.sleep(0.05)
        finished.set()

    result = walk_plan(plan, execute, parallelism=2, retry=no_sleep())
    assert finished.is_set() and result.done == ["slow"] and list(result.failed) == ["fails"]
