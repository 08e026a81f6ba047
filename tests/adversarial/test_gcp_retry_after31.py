"""A throttled GCE call waits what the server's Retry-After asks (seconds or an HTTP date),
capped, and falls back to poolform's own backoff when the header is absent or unreadable.

The real google-cloud-compute client talks to the local Compute endpoint, which answers 429 /
503 with the header; the provider's sleep and wall clock are injected, so nothing waits."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from providers.gcp import GcpProvider
from providers.retry import RETRY_AFTER_CAP
from tests.gcp.conftest import LINEAGE, REGION
from tests.gcp.fake_cloud import FakeCloud, HttpFault
from tests.gcp.fake_compute import FakeComputeServer

NOW = datetime(2026, 11, 28, 12, 0, 0, tzinfo=UTC)
METHOD = "regionInstanceGroupManagers.list"
FIRST_BACKOFF = 0.5  # the most the first full-jitter retry waits (base 0.5 s)


@pytest.fixture(scope="module")
def server() -> Iterator[FakeComputeServer]:
    running = FakeComputeServer(port=0).start()
    yield running
    running.stop()


@pytest.fixture
def cloud(server: FakeComputeServer) -> FakeCloud:
    server.cloud.reset()
    return server.cloud


@pytest.fixture
def slept(server: FakeComputeServer, tmp_path: Path) -> Iterator[tuple[GcpProvider, list[float]]]:
    waits: list[float] = []
    provider = GcpProvider(
        settings={"project": server.cloud.project, "endpoint": server.url, "retries": 2},
        state_dir=tmp_path / ".poolform",
        region=REGION,
        environ={},
        sleep=waits.append,
        now=lambda: NOW,
    )
    yield provider, waits
    provider.close()


def throttled(retry_after: str | None, status: int = 429) -> HttpFault:
    reason = "rateLimitExceeded" if status == 429 else "backendError"
    return HttpFault(status, reason, "slow down", retry_after=retry_after)


def test_a_retry_after_in_seconds_is_waited_before_the_retry(
    slept: tuple[GcpProvider, list[float]], cloud: FakeCloud
) -> None:
    provider, waits = slept
    cloud.fail(METHOD, throttled("7"))
    assert provider.list(LINEAGE) == []
    assert waits == [7.0]
    assert provider.api_calls[METHOD] == 2


def test_a_retry_after_http_date_waits_until_that_time(
    slept: tuple[GcpProvider, list[float]], cloud: FakeCloud
) -> None:
    provider, waits = slept
    cloud.fail(METHOD, throttled("Sat, 28 Nov 2026 12:00:12 GMT", status=503))
    provider.list(LINEAGE)
    assert waits == [12.0]


def test_a_retry_after_date_already_past_retries_at_once(
    slept: tuple[GcpProvider, list[float]], cloud: FakeCloud
) -> None:
    provider, waits = slept
    cloud.fail(METHOD, throttled("Sat, 28 Nov 2026 11:59:00 GMT"))
    provider.list(LINEAGE)
    assert waits == [0.0]


def test_a_retry_after_longer_than_the_cap_is_capped(
    slept: tuple[GcpProvider, list[float]], cloud: FakeCloud
) -> None:
    # one retry waits at most RETRY_AFTER_CAP (20 s; the total: test_retry_after_budget33l.py)
    provider, waits = slept
    cloud.fail(METHOD, throttled("3600"), throttled("Sun, 29 Nov 2026 12:00:00 GMT"))
    provider.list(LINEAGE)
    assert waits == [RETRY_AFTER_CAP, RETRY_AFTER_CAP]


@pytest.mark.parametrize("header", [None, "soon", "1.5", "-3", "", "Sat, 99 Foo 2026"])
def test_an_absent_or_malformed_retry_after_falls_back_to_the_backoff(
    slept: tuple[GcpProvider, list[float]], cloud: FakeCloud, header: str | None
) -> None:
    provider, waits = slept
    cloud.fail(METHOD, throttled(header))
    provider.list(LINEAGE)
    assert len(waits) == 1 and 0.0 <= waits[0] <= FIRST_BACKOFF
