"""A server answering every try with `429 Retry-After: 3600` held one GCE request for a minute
per attempt (the wait was capped at 60 s per retry, but nothing capped their sum): `retries:
20` made one request wait 20 minutes, and an apply or refresh of many resources hours, with
nothing printed. One retry now waits at most RETRY_AFTER_CAP (20 s, the longest an AWS SDK
backs off) and one request at most RETRY_AFTER_BUDGET (60 s) in all for a server's Retry-After;
past that the request is given up on, and the error says what the server asked.

The real google-cloud-compute client talks to the local Compute endpoint, which answers with
the header; the provider's sleep and wall clock are injected, so nothing waits."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from providers.gcp import GcpProvider
from providers.protocol import ErrorKind, ProviderError
from providers.retry import RETRY_AFTER_BUDGET, RETRY_AFTER_CAP, RetryPolicy
from tests.gcp.conftest import LINEAGE, REGION
from tests.gcp.fake_cloud import FakeCloud, HttpFault
from tests.gcp.fake_compute import FakeComputeServer

NOW = datetime(2026, 11, 28, 12, 0, 0, tzinfo=UTC)
METHOD = "regionInstanceGroupManagers.list"


def throttled(retry_after: str) -> HttpFault:
    return HttpFault(429, "rateLimitExceeded", "slow down", retry_after=retry_after)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeComputeServer]:
    running = FakeComputeServer(port=0).start()
    yield running
    running.stop()


@pytest.fixture
def cloud(server: FakeComputeServer) -> FakeCloud:
    server.cloud.reset()
    return server.cloud


def provider(server: FakeComputeServer, tmp_path: Path, waits: list[float]) -> GcpProvider:
    return GcpProvider(
        settings={"project": server.cloud.project, "endpoint": server.url, "retries": 20},
        state_dir=tmp_path / ".poolform",
        region=REGION,
        environ={},
        sleep=waits.append,
        now=lambda: NOW,
    )


def test_the_caps_are_what_the_documentation_says() -> None:
    assert (RETRY_AFTER_CAP, RETRY_AFTER_BUDGET) == (20.0, 60.0)


def test_a_server_asking_an_hour_at_every_try_is_given_up_on_after_a_minute_in_all(
    server: FakeComputeServer, cloud: FakeCloud, tmp_path: Path
) -> None:
    waits: list[float] = []
    gcp = provider(server, tmp_path, waits)
    cloud.fail(METHOD, *[throttled("3600")] * 21)
    try:
        with pytest.raises(ProviderError) as refused:
            gcp.list(LINEAGE)
    finally:
        gcp.close()

    assert waits == [20.0, 20.0, 20.0]  # not 20 minutes: three waits of the cap
    assert gcp.api_calls[METHOD] == 4
    assert refused.value.kind is ErrorKind.RETRYABLE and refused.value.retried
    assert refused.value.message.endswith(
        ": slow down (still failing after 4 attempts; the server asks to wait 3600 s more, past "
        "the 60 s poolform waits in all for one request: try again later)"
    ), refused.value.message


def test_short_retry_afters_are_all_waited_within_the_budget(
    server: FakeComputeServer, cloud: FakeCloud, tmp_path: Path
) -> None:
    waits: list[float] = []
    gcp = provider(server, tmp_path, waits)
    cloud.fail(METHOD, *[throttled("5")] * 12)
    try:
        assert gcp.list(LINEAGE) == []
    finally:
        gcp.close()
    assert waits == [5.0] * 12  # 60 s in all: within the budget, every retry made


def _throttled_error() -> ProviderError:
    return ProviderError(ErrorKind.RETRYABLE, "throttled", retry_after="3600")


def test_the_walkers_retries_keep_to_the_same_budget() -> None:
    """The apply walker and refresh retry with the same policy: a Retry-After on an error
    they retry is waited at most the cap, and at most the budget in all."""
    waits: list[float] = []
    calls: list[int] = []

    def call() -> None:
        calls.append(1)
        raise _throttled_error()

    with pytest.raises(ProviderError) as refused:
        RetryPolicy(attempts=8).call(call, sleep=waits.append)
    assert (waits, len(calls)) == ([20.0, 20.0, 20.0], 4)
    assert "still failing after 4 attempts; the server asks to wait 3600 s more" in str(
        refused.value.message
    )


def test_the_backoff_without_a_retry_after_is_not_on_the_budget() -> None:
    """A user's `retries` is kept when the server names no wait: the budget is Retry-After's."""
    waits: list[float] = []
    calls: list[int] = []

    def call() -> None:
        calls.append(1)
        raise ProviderError(ErrorKind.RETRYABLE, "5xx")

    policy = RetryPolicy(attempts=21, base=0.5, cap=8.0, random=lambda: 1.0)
    with pytest.raises(ProviderError):
        policy.call(call, sleep=waits.append)
    assert len(calls) == 21 and sum(waits) > RETRY_AFTER_BUDGET
