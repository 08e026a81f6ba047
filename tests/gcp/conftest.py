"""One local Compute endpoint per session (port 0), wiped before every test; providers built
on the real google-cloud-compute client pointed at it. The API calls each test made are
recorded as the test's `gcp_api_calls` property (shown in junit reports)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from providers.gcp import GcpProvider
from providers.protocol import ResourceSpec
from tests.conftest import copy_example
from tests.gcp.fake_cloud import FakeCloud
from tests.gcp.fake_compute import FakeComputeServer

REGION = "us-central1"
LINEAGE = "5b0c7c52-7d0a-4d0e-9a51-0c1d9a3e2f11"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "anyscale-gcp"
CLUSTER = """kind: Cluster
name: demo
provider: gcp
region: us-central1
default_compute_pool: demo-machine-pool
provider_settings:
  project: {project}
  poll_interval: 0
"""


def example_on_endpoint(target: Path, cloud: FakeCloud) -> Path:
    """examples/anyscale-gcp copied to `target`, its Cluster aimed at the local endpoint's
    project (the installed poolform finds the endpoint in POOLFORM_GCP_ENDPOINT)."""
    copy_example(EXAMPLE, target, "*.md")
    (target / "cluster.yaml").write_text(CLUSTER.format(project=cloud.project))
    return target


@pytest.fixture(scope="session")
def endpoint() -> Iterator[FakeComputeServer]:
    server = FakeComputeServer(port=0).start()
    yield server
    server.stop()


@pytest.fixture
def cloud(endpoint: FakeComputeServer) -> FakeCloud:
    endpoint.cloud.reset()
    return endpoint.cloud


@pytest.fixture
def make_provider(
    endpoint: FakeComputeServer, cloud: FakeCloud, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[..., GcpProvider]]:
    made: list[GcpProvider] = []

    def make(**settings: Any) -> GcpProvider:
        base = {
            "project": cloud.project,
            "endpoint": endpoint.url,
            "poll_interval": 0,
            "operation_timeout": 5,
            "retries": 2,
        }
        provider = GcpProvider(
            settings={**base, **settings},
            state_dir=tmp_path / ".poolform",
            region=REGION,
            environ={},
            sleep=lambda _seconds: None,
        )
        made.append(provider)
        return provider

    yield make
    for provider in made:
        request.node.user_properties.append(("gcp_api_calls", dict(provider.api_calls)))
        provider.close()


@pytest.fixture
def provider(make_provider: Callable[..., GcpProvider]) -> GcpProvider:
    return make_provider()


def machine_type(
    name: str = "reserved-a100",
    *,
    instance_type: str = "a2-highgpu-8g",
    market: str = "ON_DEMAND",
    low: int = 2,
    high: int = 4,
    zones: list[str] | None = None,
    advanced: dict[str, Any] | None = None,
    user_data: str | None = None,
    token: str = "token-1",
    lineage: str = LINEAGE,
) -> ResourceSpec:
    template: dict[str, Any] = {"instance_type": instance_type, "market_type": market}
    if zones is not None:
        template["zones"] = zones
    if advanced is not None:
        template["advanced_instance_config"] = advanced
    if user_data is not None:
        template["user_data"] = user_data
    attributes = {
        "provider": "gcp",
        "launch_templates": [template],
        "partitions": [{"name": "any", "size": high}],
        "min_size": low,
        "max_size": high,
    }
    return ResourceSpec(
        f"machine_pool.demo.machine_type.{name}", "machine_type", attributes, lineage, token
    )
