"""A quota refusal on a spot machine type was told as a stockout: "spot capacity unavailable
(GCE has no spot VMs of this type to give): ... QUOTA_EXCEEDED: Quota 'PREEMPTIBLE_NVIDIA_
A100_GPUS' exceeded", sending the user to wait or try another zone when the project's quota is
what to raise. The GCP provider now says "spot capacity unavailable" only for a stockout; a
quota error keeps the cloud's words. Driven through the installed poolform against the local
Compute endpoint (tests/gcp/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.gcp_endpoint import gcp
from tests.gcp.fake_cloud import FakeCloud, HttpFault, OpFault

__all__ = ["gcp"]  # the fixture

QUOTA = "Quota 'PREEMPTIBLE_NVIDIA_A100_GPUS' exceeded. Limit: 0.0 in region us-central1."
SPOT = "--target=machine_pool.demo-machine-pool.machine_type.spot-a100"  # the one insert
STOCKOUT = "spot capacity unavailable (GCE has no spot VMs of this type to give)"


FAULTS = {
    "the group's operation": OpFault("QUOTA_EXCEEDED", QUOTA, 403),
    "the request": HttpFault(403, "quotaExceeded", QUOTA),
}


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_a_quota_on_a_spot_type_is_told_as_a_quota(
    pf: Pf, gcp: tuple[Path, FakeCloud], fault: HttpFault | OpFault
) -> None:
    config, cloud = gcp
    cloud.fail("regionInstanceGroupManagers.insert", fault)
    result = pf("apply", config, "--auto-approve", SPOT)
    assert result.returncode == 1
    (failed,) = (line for line in result.stderr.splitlines() if line.startswith("  failed:"))
    assert "machine_type.spot-a100" in failed and QUOTA in failed
    assert STOCKOUT not in result.stdout + result.stderr


def test_a_spot_stockout_still_says_so(pf: Pf, gcp: tuple[Path, FakeCloud]) -> None:
    config, cloud = gcp
    cloud.fail(
        "regionInstanceGroupManagers.insert",
        OpFault("ZONE_RESOURCE_POOL_EXHAUSTED", "The zone does not have enough resources"),
    )
    result = pf("apply", config, "--auto-approve", SPOT)
    assert result.returncode == 1
    assert f"spot-a100: {STOCKOUT}" in result.stderr
