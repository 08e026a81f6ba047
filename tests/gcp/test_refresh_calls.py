"""Refresh cost in API calls: one paginated list per resource type, never one call per
resource. A per-resource refresh (Terraform's) of the same fleet costs over 1,000 calls."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest

from providers.gcp import GcpProvider
from tests.gcp.conftest import LINEAGE, machine_type
from tests.gcp.fake_cloud import FakeCloud

RESOURCE_TYPES = 4  # instance templates, groups, autoscalers, instances


def _fleet(provider: GcpProvider, groups: int, per_group: int) -> None:
    for index in range(groups):
        provider.create(
            machine_type(f"type-{index}", low=per_group, high=per_group, token=f"t-{index}")
        )


@pytest.mark.parametrize(
    ("groups", "per_group", "page_size"),
    [(20, 50, 500), pytest.param(20, 50, 100, marks=pytest.mark.slow), (5, 8, 3)],
)
def test_refresh_costs_pages_not_resources(
    make_provider: Callable[..., GcpProvider],
    cloud: FakeCloud,
    groups: int,
    per_group: int,
    page_size: int,
) -> None:
    provider = make_provider(page_size=page_size)
    _fleet(provider, groups, per_group)
    instances = groups * per_group
    assert len(cloud.instances) == instances
    before_client, before_server = sum(provider.api_calls.values()), len(cloud.log)

    found = provider.list(LINEAGE)

    assert len(found) == groups
    assert sum(o.attributes["running"] for o in found) == instances
    sent = sum(provider.api_calls.values()) - before_client
    served = len(cloud.log) - before_server
    assert sent == served  # the provider's count is what the endpoint saw
    # instances page by page_size; groups, templates and autoscalers too when they overflow
    expected = 3 * math.ceil(groups / page_size) + math.ceil(instances / page_size)
    assert sent == expected
    assert sent <= math.ceil(instances / page_size) + RESOURCE_TYPES + 2 or page_size < groups


def test_the_fake_cloud_never_reuses_an_instance_name(
    make_provider: Callable[..., GcpProvider], cloud: FakeCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fleet above once came up one instance short (a group never stable): two random
    suffixes drawn alike, and the second instance replaced the first. Drawn alike on purpose
    here, the group still gets every instance."""
    real = random.getrandbits
    alike = iter([7, 7])  # the first two instance suffixes (20 bits; operations draw 32)

    def draw(bits: int) -> int:
        return next(alike, None) or real(bits) if bits == 20 else real(bits)

    monkeypatch.setattr("tests.gcp.fake_cloud.random.getrandbits", draw)
    provider = make_provider()
    provider.create(machine_type("twins", low=3, high=3, token="t-twins"))
    assert len(cloud.instances) == 3
