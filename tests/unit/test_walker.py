"""The apply walker's contract: order, parallelism, retries, and what happens on failure.

No test here waits on real time: retries sleep on a fake clock, and concurrency is shown with
barriers and events (a wrong walker breaks a barrier instead of racing a timer)."""

from __future__ import annotations

import threading

import pytest

from providers.protocol import ErrorKind, ProviderError
from providers.retry import RetryPolicy
from reconciler.apply import walk_plan
from reconciler.plan.model import Action, ChangeKey, Plan, ResourceChange
from tests.fakes import FakeClock

WAIT = 30  # seconds a barrier waits before the test fails: only a broken walker gets there


def plan_of(edges: list[tuple[str, str]], nodes: list[str]) -> Plan:
    changes = tuple(ResourceChange(n, "resource_pool", Action.CREATE, "new") for n in nodes)
    keys = tuple(ChangeKey(n) for n in nodes)
    return Plan("d" * 64, "L", 0, changes, (keys,), tuple(map(keys_of, edges)))


def keys_of(edge: tuple[str, str]) -> tuple[ChangeKey, ChangeKey]:
    return ChangeKey(edge[0]), ChangeKey(edge[1])


def names(keys: object) -> list[str]:
    assert isinstance(keys, tuple | dict)
    return [str(key) for key in keys]


def test_dependencies_finish_before_dependents_start() -> None:
    plan = plan_of([("a", "b"), ("b", "c"), ("a", "d")], ["a", "b", "c", "d"])
    log: list[tuple[str, str]] = []
    lock = threading.Lock()

    def execute(change: ResourceChange) -> None:
        with lock:
            log.append(("start", change.address))
            log.append(("end", change.address))

    result = walk_plan(plan, execute, parallelism=4, clock=FakeClock())
    assert result.ok and sorted(names(result.done)) == ["a", "b", "c", "d"]
    for before, after in plan.edges:
        assert log.index(("end", before.address)) < log.index(("start", after.address))


def test_independent_changes_run_in_parallel_up_to_the_bound() -> None:
    nodes = [f"n{i}" for i in range(12)]
    plan = plan_of([], nodes)
    together = threading.Barrier(4, timeout=WAIT)  # trips only with four changes in flight
    active = 0
    peak = 0
    lock = threading.Lock()

    def execute(change: ResourceChange) -> None:
        nonlocal active, peak
        with lock:
            active += 1
            peak = max(peak, active)
        together.wait()
        with lock:
            active -= 1

    assert walk_plan(plan, execute, parallelism=4, clock=FakeClock()).ok
    assert peak == 4


def test_retryable_errors_are_retried_with_growing_jittered_backoff() -> None:
    plan = plan_of([], ["a"])
    calls = 0

    def execute(change: ResourceChange) -> None:
        nonlocal calls
        calls += 1
        if calls < 4:
            raise ProviderError(ErrorKind.RETRYABLE, "throttled")

    clock = FakeClock()
    policy = RetryPolicy(base=0.1, cap=10, random=lambda: 1.0)
    events: list[dict[str, object]] = []
    result = walk_plan(plan, execute, retry=policy, emit=events.append, clock=clock)
    assert result.ok and calls == 4
    assert clock.slept == [0.1, 0.2, 0.4]
    assert [e["attempt"] for e in events if e["type"] == "retry"] == [1, 2, 3]
    [done] = [e for e in events if e["type"] == "done"]
    assert done["elapsed"] == pytest.approx(0.7)  # the clock's time, slept backoff included


def test_a_change_that_keeps_failing_makes_exactly_the_budgeted_calls() -> None:
    plan = plan_of([], ["a"])
    calls = 0

    def execute(change: ResourceChange) -> None:
        nonlocal calls
        calls += 1
        raise ProviderError(ErrorKind.RETRYABLE, "throttled")

    clock = FakeClock()
    result = walk_plan(plan, execute, retry=RetryPolicy(attempts=3), clock=clock)
    assert names(result.failed) == ["a"] and "throttled" in result.failed[ChangeKey("a")]
    assert calls == 3 and len(clock.slept) == 2


def test_an_error_the_provider_already_retried_is_not_retried_again() -> None:
    plan = plan_of([], ["a"])
    calls = 0

    def execute(change: ResourceChange) -> None:
        nonlocal calls
        calls += 1
        raise ProviderError(ErrorKind.RETRYABLE, "throttled 5 times", retried=True)

    result = walk_plan(plan, execute, retry=RetryPolicy(attempts=8), clock=FakeClock())
    assert calls == 1 and names(result.failed) == ["a"]


def test_a_permanent_error_stops_new_work_and_skips_dependents_once() -> None:
    # a -> b -> c, and x independent but queued behind the failure with parallelism 1
    plan = plan_of([("a", "b"), ("b", "c")], ["a", "x", "b", "c"])

    def execute(change: ResourceChange) -> None:
        if change.address == "a":
            raise ProviderError(ErrorKind.PERMANENT, "invalid instance type")

    events: list[dict[str, object]] = []
    result = walk_plan(plan, execute, parallelism=1, emit=events.append, clock=FakeClock())
    a, b, c, x = map(ChangeKey, "abcx")
    assert result.failed == {a: "invalid instance type"}
    assert result.skipped == {b: a, c: a}
    assert result.not_started == (x,)
    assert sorted(e["address"] for e in events if e["type"] == "skipped") == ["b", "c"]


@pytest.mark.parametrize("kind", [ErrorKind.CAPACITY, ErrorKind.PERMANENT])
def test_in_flight_changes_finish_when_one_fails(kind: ErrorKind) -> None:
    plan = plan_of([], ["fails", "slow"])
    slow_started = threading.Event()
    failure_seen = threading.Event()

    def execute(change: ResourceChange) -> None:
        if change.address == "fails":
            assert slow_started.wait(WAIT)
            raise ProviderError(kind, "no")
        slow_started.set()
        assert failure_seen.wait(WAIT)  # still running when the walker took in the failure

    def emit(event: dict[str, object]) -> None:
        if event["type"] == "failed":
            failure_seen.set()

    result = walk_plan(plan, execute, parallelism=2, emit=emit, clock=FakeClock())
    assert names(result.done) == ["slow"] and names(result.failed) == ["fails"]
