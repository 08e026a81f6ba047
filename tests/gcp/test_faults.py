"""Faults injected at the HTTP layer of the local endpoint: throttling, capacity, timeouts."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from providers.gcp import GcpProvider
from providers.protocol import ErrorKind, ProviderError
from tests.gcp.conftest import LINEAGE, machine_type
from tests.gcp.fake_cloud import FakeCloud, HttpFault, OpFault

THROTTLED = HttpFault(429, "rateLimitExceeded", "Rate Limit Exceeded")
UNAVAILABLE = HttpFault(503, "backendError", "The service is currently unavailable")
EXHAUSTED = (
    "ZONE_RESOURCE_POOL_EXHAUSTED",
    "The zone 'projects/p/zones/us-central1-a' does not have enough resources available to "
    "fulfill the request. Try a different zone, or try again later.",
)


def test_throttling_is_retried(provider: GcpProvider, cloud: FakeCloud) -> None:
    cloud.fail("instanceTemplates.insert", THROTTLED, UNAVAILABLE)
    cloud.fail("instances.aggregatedList", THROTTLED)
    observed = provider.create(machine_type())
    assert observed.attributes["running"] == 2
    assert provider.api_calls["instanceTemplates.insert"] == 3  # two refused, one accepted
    assert cloud.calls()["instanceTemplates.insert"] == 3
    assert provider.list(LINEAGE)[0].provider_ids == observed.provider_ids


def test_throttling_past_the_retries_is_retryable(provider: GcpProvider, cloud: FakeCloud) -> None:
    cloud.fail("regionInstanceGroupManagers.list", THROTTLED, THROTTLED, THROTTLED)
    with pytest.raises(ProviderError) as raised:
        provider.list(LINEAGE)
    assert raised.value.kind is ErrorKind.RETRYABLE
    assert "Rate Limit Exceeded" in raised.value.message
    assert provider.api_calls["regionInstanceGroupManagers.list"] == 3  # retries=2


def test_zone_exhausted_operation_is_a_capacity_error(
    provider: GcpProvider, cloud: FakeCloud
) -> None:
    cloud.fail("regionInstanceGroupManagers.insert", OpFault(*EXHAUSTED))
    spec = machine_type()
    with pytest.raises(ProviderError) as raised:
        provider.create(spec)
    error = raised.value
    assert error.kind is ErrorKind.CAPACITY and error.address == spec.address
    assert "ZONE_RESOURCE_POOL_EXHAUSTED" in error.message
    assert "does not have enough resources" in error.message
    assert "spot" not in error.message


def test_quota_exceeded_operation_is_a_capacity_error(
    provider: GcpProvider, cloud: FakeCloud
) -> None:
    cloud.fail(
        "regionInstanceGroupManagers.resize",
        OpFault("QUOTA_EXCEEDED", "Quota 'NVIDIA_A100_GPUS' exceeded. Limit: 16.0", 403),
    )
    ids = provider.create(machine_type()).provider_ids
    with pytest.raises(ProviderError) as raised:
        provider.update(machine_type(low=5, high=8), ids)
    assert raised.value.kind is ErrorKind.CAPACITY
    assert "NVIDIA_A100_GPUS" in raised.value.message


def test_spot_stockout_says_spot(provider: GcpProvider, cloud: FakeCloud) -> None:
    cloud.exhaust("a2-highgpu-8g", "SPOT", *EXHAUSTED)
    with pytest.raises(ProviderError) as raised:
        provider.create(machine_type("spot-a100", market="SPOT"))
    error = raised.value
    assert error.kind is ErrorKind.CAPACITY
    assert error.message.startswith("spot capacity unavailable")
    assert "does not have enough resources" in error.message
    assert provider.api_calls["regionInstanceGroupManagers.listErrors"] >= 1


def test_operation_timeout_is_surfaced(
    make_provider: Callable[..., GcpProvider], cloud: FakeCloud
) -> None:
    provider = make_provider(operation_timeout=0.2, poll_interval=0.01)
    cloud.stuck.add("instanceTemplates.insert")
    with pytest.raises(ProviderError) as raised:
        provider.create(machine_type())
    error = raised.value
    assert error.kind is ErrorKind.RETRYABLE
    assert "still RUNNING after 0.2s (operation_timeout)" in error.message
    assert provider.api_calls["globalOperations.wait"] >= 1


def test_a_long_poll_that_outlasts_the_operation_timeout_is_no_news(
    make_provider: Callable[..., GcpProvider], cloud: FakeCloud
) -> None:
    """GCE holds operations.wait until the operation is done or its own deadline. The last
    wait before poolform's deadline ran out client-side, which read as "GCE unreachable" and
    was retried with the same deadline spent; it is the operation still running."""
    provider = make_provider(operation_timeout=0.2, poll_interval=0.01, retries=0)
    cloud.stuck.add("instanceTemplates.insert")
    cloud.long_poll = 3.0
    with pytest.raises(ProviderError) as raised:
        provider.create(machine_type())
    error = raised.value
    assert error.kind is ErrorKind.RETRYABLE
    assert "still RUNNING after 0.2s (operation_timeout)" in error.message, error.message
    assert provider.api_calls["globalOperations.wait"] == 1


def test_group_never_stable_times_out(
    make_provider: Callable[..., GcpProvider], cloud: FakeCloud
) -> None:
    provider = make_provider(operation_timeout=0.2, poll_interval=0.01)
    ids = provider.create(machine_type()).provider_ids
    del cloud.templates[ids["template"]]  # nothing to make instances from
    with pytest.raises(ProviderError) as raised:
        provider.update(machine_type(low=3, high=4), ids)
    assert raised.value.kind is ErrorKind.RETRYABLE
    assert "not stable after 0.2s" in raised.value.message


def test_not_found_and_permanent(provider: GcpProvider, cloud: FakeCloud) -> None:
    with pytest.raises(ProviderError) as raised:
        provider.update(machine_type(), {"group": "pf-missing"})
    assert raised.value.kind is ErrorKind.NOT_FOUND
    cloud.fail("instanceTemplates.insert", HttpFault(403, "forbidden", "Required permission"))
    with pytest.raises(ProviderError) as raised:
        provider.create(machine_type())
    assert raised.value.kind is ErrorKind.PERMANENT
    assert provider.api_calls["instanceTemplates.insert"] == 1  # never retried


def test_unreachable_endpoint_is_retryable(make_provider: Callable[..., GcpProvider]) -> None:
    provider = make_provider(endpoint="http://127.0.0.1:9", retries=0)
    with pytest.raises(ProviderError) as raised:
        provider.list(LINEAGE)
    assert raised.value.kind is ErrorKind.RETRYABLE and "unreachable" in raised.value.message


def test_a_change_that_keeps_failing_makes_one_budget_of_calls_not_two(
    provider: GcpProvider, cloud: FakeCloud
) -> None:
    """The boundary retries each request (retries=2: 3 sends); the walker does not retry the
    change again on top of it, so 3 inserts are sent, not 3 x 8."""
    from providers.retry import RetryPolicy
    from reconciler.apply import walk_plan
    from reconciler.plan.model import Action, Plan, ResourceChange
    from tests.fakes import FakeClock

    cloud.fail("instanceTemplates.insert", *[UNAVAILABLE] * 50)
    spec = machine_type()
    change = ResourceChange(spec.address, spec.resource_type, Action.CREATE, "new")
    plan = Plan("d" * 64, LINEAGE, 0, (change,), ((change.key,),), ())
    result = walk_plan(
        plan, lambda _: provider.create(spec), retry=RetryPolicy(attempts=8), clock=FakeClock()
    )
    assert list(result.failed) == [change.key]
    assert provider.api_calls["instanceTemplates.insert"] == 3
    assert cloud.calls()["instanceTemplates.insert"] == 3
