"""Faults injected at the HTTP layer, under a real boto3 client talking to moto.

moto has no fault injection. A botocore `before-send` handler that answers instead of the
server (a 503 RequestLimitExceeded, a 400 InsufficientInstanceCapacity, ...) goes through the
same response parsing and retry logic as a real answer from AWS: botocore's standard retry mode
retries the throttle itself, and what is left is translated at the provider's one boundary.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse

from providers.aws import AwsProvider
from providers.protocol import ErrorKind, ProviderError
from providers.retry import RetryPolicy
from reconciler.apply import walk_plan
from reconciler.plan.model import Action, Plan, ResourceChange
from tests.fakes import FakeClock

from .conftest import machine

EC2_ERROR = (
    '<?xml version="1.0" encoding="UTF-8"?><Response><Errors><Error><Code>{code}</Code>'
    "<Message>{message}</Message></Error></Errors><RequestID>fault</RequestID></Response>"
)
QUERY_ERROR = (
    '<ErrorResponse xmlns="http://autoscaling.amazonaws.com/doc/2011-01-01/"><Error>'
    "<Type>Sender</Type><Code>{code}</Code><Message>{message}</Message></Error>"
    "<RequestId>fault</RequestId></ErrorResponse>"
)


class _Body:
    def __init__(self, body: bytes):
        self.body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.body


class Faults:
    """Answers the first `times` sends of `operation` with an error; counts what it saw."""

    def __init__(self, operation: str, status: int, code: str, message: str, times: int):
        self.operation, self.status, self.times = operation, status, times
        self.code, self.message = code, message
        self.sends = 0

    def __call__(self, request: Any, event_name: str, **_: Any) -> AWSResponse | None:
        if not event_name.endswith("." + self.operation):
            return None
        self.sends += 1
        if self.sends > self.times:
            return None
        template = EC2_ERROR if ".ec2." in event_name else QUERY_ERROR
        body = template.format(code=self.code, message=self.message).encode()
        return AWSResponse(request.url, self.status, {}, _Body(body))

    def install(self, provider: AwsProvider) -> Faults:
        for client in (provider.clients.ec2, provider.clients.autoscaling):
            client.meta.events.register("before-send", self)  # after the call counter
        return self


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    """botocore's own backoff sleeps up to seconds; the retries still happen."""
    monkeypatch.setattr(
        "botocore.retries.standard.ExponentialBackoff.delay_amount", lambda self, context: 0.0
    )


def throttle(operation: str, times: int) -> Faults:
    return Faults(operation, 503, "RequestLimitExceeded", "Request limit exceeded.", times)


def test_botocore_retries_a_throttle_itself(provider: AwsProvider, lineage: str) -> None:
    provider.create(machine(lineage))
    faults = throttle("DescribeLaunchTemplates", times=2).install(provider)
    provider.api_calls.clear()
    assert len(provider.list(lineage)) == 1
    assert faults.sends == 3  # max_attempts 3: two throttled, the third answered
    assert provider.api_calls["DescribeLaunchTemplates"] == 3  # every attempt counted


def test_a_throttle_past_botocore_is_not_retried_again_by_the_walker(
    provider: AwsProvider, lineage: str
) -> None:
    """botocore is the one retry layer for AWS requests: a change whose request keeps being
    throttled makes max_attempts (3) sends, not 3 for each of the walker's 8 attempts."""
    spec = machine(lineage)
    faults = throttle("CreateLaunchTemplate", times=100).install(provider)
    change = ResourceChange(spec.address, spec.resource_type, Action.CREATE, "new")
    plan = Plan("d" * 64, lineage, 0, (change,), ((change.key,),), ())
    result = walk_plan(
        plan, lambda _: provider.create(spec), retry=RetryPolicy(attempts=8), clock=FakeClock()
    )
    assert "RequestLimitExceeded" in result.failed[change.key]
    assert faults.sends == 3


def test_what_botocore_does_not_retry_is_retried_by_the_walker(
    provider: AwsProvider, lineage: str
) -> None:
    provider.create(machine(lineage))
    busy = "An update is already in progress for the group."
    faults = Faults("DescribeAutoScalingGroups", 400, "ScalingActivityInProgress", busy, 2)
    faults.install(provider)
    retries: list[ProviderError] = []
    observed = RetryPolicy().call(
        lambda: provider.list(lineage),
        sleep=lambda _: None,
        on_retry=lambda _n, _d, error: retries.append(error),
    )
    assert len(observed) == 1
    assert [(e.kind, e.retried) for e in retries] == [(ErrorKind.RETRYABLE, False)] * 2
    assert faults.sends == 3  # one send per attempt: botocore left this one to the walker


def test_an_auto_scaling_throttle_is_retryable(provider: AwsProvider, lineage: str) -> None:
    Faults("DescribeAutoScalingGroups", 400, "Throttling", "Rate exceeded", 9).install(provider)
    with pytest.raises(ProviderError) as caught:
        provider.list(lineage)
    assert caught.value.kind is ErrorKind.RETRYABLE
    assert provider.api_calls["DescribeAutoScalingGroups"] == 3


def test_server_errors_are_retryable(provider: AwsProvider, lineage: str) -> None:
    Faults("DescribeLaunchTemplates", 500, "InternalError", "oops", 9).install(provider)
    with pytest.raises(ProviderError) as caught:
        provider.list(lineage)
    assert caught.value.kind is ErrorKind.RETRYABLE


def test_insufficient_capacity_carries_the_clouds_message(
    provider: AwsProvider, lineage: str
) -> None:
    message = "We currently do not have sufficient p5.48xlarge capacity in us-east-1a."
    Faults("CreateAutoScalingGroup", 400, "InsufficientInstanceCapacity", message, 1).install(
        provider
    )
    spec = machine(lineage)
    with pytest.raises(ProviderError) as caught:
        provider.create(spec)
    error = caught.value
    assert error.kind is ErrorKind.CAPACITY
    assert message in error.message
    assert "on-demand p5.48xlarge" in error.message
    assert error.address == spec.address
    assert provider.api_calls["CreateAutoScalingGroup"] == 1  # a 400 is not retried
    # The apply is resumed with the same token: the template is found, the group made.
    again = provider.create(spec)
    assert again.attributes["running"] == 1


def test_spot_unavailability_is_named(provider: AwsProvider, lineage: str) -> None:
    message = "There is no Spot capacity available that matches your request."
    Faults("CreateAutoScalingGroup", 400, "InsufficientInstanceCapacity", message, 1).install(
        provider
    )
    with pytest.raises(ProviderError) as caught:
        provider.create(machine(lineage, market="SPOT", instance_type="p4de.24xlarge"))
    assert caught.value.kind is ErrorKind.CAPACITY
    assert "no capacity for spot p4de.24xlarge" in caught.value.message
    assert message in caught.value.message


def test_group_quota_is_a_capacity_error(provider: AwsProvider, lineage: str) -> None:
    message = "You have reached your quota of 500 Auto Scaling groups."
    Faults("CreateAutoScalingGroup", 400, "LimitExceeded", message, 1).install(provider)
    with pytest.raises(ProviderError) as caught:
        provider.create(machine(lineage))
    assert caught.value.kind is ErrorKind.CAPACITY
    assert "over the account quota" in caught.value.message


def test_access_denied_is_permanent(provider: AwsProvider, lineage: str) -> None:
    Faults("CreateLaunchTemplate", 403, "UnauthorizedOperation", "not authorized", 1).install(
        provider
    )
    with pytest.raises(ProviderError) as caught:
        provider.create(machine(lineage))
    assert caught.value.kind is ErrorKind.PERMANENT
    assert "IAM permission" in caught.value.message
    assert provider.api_calls["CreateLaunchTemplate"] == 1


def test_an_unreachable_endpoint_is_retryable(
    aws_env: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, lineage: str
) -> None:
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # discard: nothing listens
    provider = AwsProvider(settings={"image_id": "ami-1"}, state_dir=tmp_path)
    try:
        with pytest.raises(ProviderError) as caught:
            provider.list(lineage)
        assert caught.value.kind is ErrorKind.RETRYABLE
        assert provider.api_calls["DescribeAutoScalingGroups"] == 3
    finally:
        provider.close()
