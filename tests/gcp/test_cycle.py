"""The full cycle on the CLI against the local Compute endpoint, with examples/anyscale-gcp:
apply, changes behind poolform's back, drift exit 2, plan shows the fix, apply, drift exit 0,
destroy. A size the scheduler moved inside the bounds is never drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import EXAMPLES, copy_example
from tests.gcp.fake_cloud import FakeCloud
from tests.gcp.fake_compute import FakeComputeServer

CLUSTER = """\
kind: Cluster
name: demo
provider: gcp
region: us-central1
default_compute_pool: demo-machine-pool
provider_settings:
  project: poolform-test
  poll_interval: 0
"""


@pytest.fixture
def config(
    tmp_path: Path, endpoint: FakeComputeServer, cloud: FakeCloud, monkeypatch: pytest.MonkeyPatch
) -> Path:
    target = tmp_path / "anyscale-gcp"
    copy_example(EXAMPLES / "anyscale-gcp", target, "*.md")
    (target / "cluster.yaml").write_text(CLUSTER)
    pool = target / "machine-pool.yaml"
    pool.write_text(pool.read_text().replace("size: 2", "size: 2\n        warm: 1"))
    monkeypatch.setenv("POOLFORM_GCP_ENDPOINT", endpoint.url)
    return target


def _group(cloud: FakeCloud, machine_type: str) -> str:
    return next(name for name in cloud.groups if machine_type in name)


def test_full_cycle(run, config: Path, cloud: FakeCloud) -> None:  # type: ignore[no-untyped-def]
    assert run("apply", config, "--auto-approve").code == 0
    assert len(cloud.groups) == 3 and len(cloud.instances) == 3  # warm 1 each
    assert run("drift", config).code == 0

    # the scheduler's move inside the bounds is not drift
    cloud.hand_resize(_group(cloud, "spot-a100"), 2)
    assert run("drift", config).code == 0

    # bounds changed and a template swapped by hand: both are drift, and plan restores them
    cloud.hand_set_bounds(_group(cloud, "ondemand-a100"), 0, 9)
    cloud.hand_set_template(
        _group(cloud, "reserved-a100"), {"machineType": "a2-highgpu-1g"}, name="by-hand"
    )
    drift = run("drift", config)
    assert drift.code == 2, drift.out + drift.err
    assert "ondemand-a100" in drift.out and "reserved-a100" in drift.out
    assert "a2-highgpu-1g" in drift.out

    plan = run("plan", config, "--detailed-exitcode")
    assert plan.code == 2, plan.err
    assert "must be replaced" in plan.out and 'a2-highgpu-1g" -> "a2-highgpu-8g' in plan.out
    assert run("apply", config, "--auto-approve").code == 0
    assert run("drift", config).code == 0, run("drift", config).out
    assert run("plan", config, "--detailed-exitcode").code == 0
    policy = cloud.autoscalers[_group(cloud, "ondemand-a100")]["autoscalingPolicy"]
    assert (policy["minNumReplicas"], policy["maxNumReplicas"]) == (1, 2)

    # a group deleted by hand comes back
    cloud.hand_delete_group(_group(cloud, "spot-a100"))
    assert run("drift", config).code == 2
    assert run("apply", config, "--auto-approve").code == 0
    assert run("drift", config).code == 0

    assert run("destroy", config, "--auto-approve").code == 0
    assert not (cloud.groups or cloud.autoscalers or cloud.instances)
    assert set(cloud.templates) == {"by-hand"}  # a person's template is theirs to delete
