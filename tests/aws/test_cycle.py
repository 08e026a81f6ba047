"""The full cycle on the CLI against moto, with examples/anyscale-aws: apply, changes behind
poolform's back, drift exit 2, plan shows the fix, apply, drift exit 0, destroy.

The machine type whose template is changed by hand has no warm instances: replacing a group
with instances starts an instance refresh, which moto does not implement (that request is
checked with botocore's Stubber in test_stubbed.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import boto3
import pytest

from tests.conftest import EXAMPLES, copy_example

from .conftest import AMI

CLUSTER = f"""\
kind: Cluster
name: demo
provider: aws
region: us-west-2
default_compute_pool: demo-machine-pool
provider_settings:
  image_id: {AMI}
  poll_interval: 0
"""


@pytest.fixture
def config(tmp_path: Path, aws_env: str) -> Path:
    target = tmp_path / "anyscale-aws"
    copy_example(EXAMPLES / "anyscale-aws", target, "*.md")
    (target / "cluster.yaml").write_text(CLUSTER)
    pool = target / "machine-pool.yaml"
    text = pool.read_text()
    # reserved-a100 and spot-a100 keep one warm instance; ondemand-a100 stays empty
    text = text.replace(
        "- name: any\n        size: 2", "- name: any\n        size: 2\n        warm: 1", 2
    )
    pool.write_text(text)
    return target


def groups(asg: Any) -> dict[str, dict[str, Any]]:
    found = asg.describe_auto_scaling_groups()["AutoScalingGroups"]
    return {
        next(t["Value"] for t in g["Tags"] if t["Key"] == "poolform:address").rsplit(".", 1)[-1]: g
        for g in found
    }


def test_full_cycle(run, config: Path) -> None:  # type: ignore[no-untyped-def]
    ec2 = boto3.client("ec2", region_name="us-west-2")
    asg = boto3.client("autoscaling", region_name="us-west-2")
    applied = run("apply", config, "--auto-approve")
    assert applied.code == 0, applied.out + applied.err
    made = groups(asg)
    assert {k: len(g["Instances"]) for k, g in made.items()} == {
        "reserved-a100": 1,
        "spot-a100": 1,
        "ondemand-a100": 0,
    }
    assert run("drift", config).code == 0

    # the scheduler's move inside the bounds is not drift
    asg.set_desired_capacity(
        AutoScalingGroupName=made["spot-a100"]["AutoScalingGroupName"], DesiredCapacity=2
    )
    assert run("drift", config).code == 0

    # bounds changed and a template changed by hand: both are drift, and plan restores them
    asg.update_auto_scaling_group(
        AutoScalingGroupName=made["reserved-a100"]["AutoScalingGroupName"], MaxSize=9
    )
    ec2.create_launch_template_version(
        LaunchTemplateId=made["ondemand-a100"]["LaunchTemplate"]["LaunchTemplateId"],
        LaunchTemplateData={"ImageId": AMI, "InstanceType": "p4d.24xlarge"},
    )
    drift = run("drift", config)
    assert drift.code == 2, drift.out + drift.err
    assert "reserved-a100" in drift.out and "ondemand-a100" in drift.out
    assert "p4d.24xlarge" in drift.out
    assert "spot-a100" not in drift.out.split("Not drift")[0]

    plan = run("plan", config, "--detailed-exitcode")
    assert plan.code == 2, plan.err
    assert "must be replaced" in plan.out and '"p4d.24xlarge" -> "p4de.24xlarge"' in plan.out
    assert run("apply", config, "--auto-approve").code == 0
    assert run("drift", config).code == 0, run("drift", config).out
    assert run("plan", config, "--detailed-exitcode").code == 0
    restored = groups(asg)
    assert restored["reserved-a100"]["MaxSize"] == 2
    assert restored["spot-a100"]["DesiredCapacity"] == 2  # still the scheduler's

    # a group deleted by hand comes back
    asg.delete_auto_scaling_group(
        AutoScalingGroupName=restored["spot-a100"]["AutoScalingGroupName"], ForceDelete=True
    )
    assert run("drift", config).code == 2
    assert run("apply", config, "--auto-approve").code == 0
    assert run("drift", config).code == 0

    assert run("destroy", config, "--auto-approve").code == 0
    assert groups(asg) == {}
    assert ec2.describe_launch_templates()["LaunchTemplates"] == []
