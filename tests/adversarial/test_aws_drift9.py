"""AWS (moto in server mode, over HTTP): a launch template deleted behind poolform's back while
its Auto Scaling group stays.

The group can then launch nothing: the scheduler's next scale-out fails. Before, `drift` said
"No drift" (exit 0) and `plan` "No changes": the provider left the template's keys out of what
it observed ("rather than guess"), and an absent key is never drift. Now the group is observed
with no instance type: drift (exit 2), and `plan` replaces the group's template, which the
provider's replace already knows to make anew; after the apply, no drift. Nothing is destroyed
that the plan did not name (the other machine type and the resource pool stay as they were)."""

from __future__ import annotations

import json
from pathlib import Path

import boto3

from tests.adversarial.conftest import Pf
from tests.aws.conftest import AMI, aws_env, moto_endpoint

__all__ = ["aws_env", "moto_endpoint"]

REGION = "us-west-2"
CONFIG = f"""kind: Cluster
name: demo
provider: aws
region: {REGION}
provider_settings: {{image_id: {AMI}, poll_interval: 0}}
---
kind: MachinePool
name: gpu
machine_types:
  - machine_type: cpu
    launch_templates: [{{instance_type: m5.large}}]
    partitions: [{{name: any, size: 2, warm: 0}}]
  - machine_type: spare
    launch_templates: [{{instance_type: m5.large}}]
    partitions: [{{name: any, size: 1, warm: 0}}]
---
kind: ResourcePool
name: seats
capacity: {{seat: 2}}
"""
SPARE = "machine_pool.gpu.machine_type.spare"


def test_a_deleted_launch_template_is_drift_and_the_plan_makes_a_new_one(
    pf: Pf, tmp_path: Path, aws_env: str
) -> None:
    directory = tmp_path / "aws"
    directory.mkdir()
    (directory / "config.yaml").write_text(CONFIG)
    applied = pf("apply", directory, "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    shown = pf("state", "show", SPARE, "--chdir", directory)
    template = json.loads(shown.stdout)["provider_ids"]["template"]
    boto3.client("ec2", region_name=REGION).delete_launch_template(LaunchTemplateId=template)

    drift = pf("drift", directory, "--json")
    assert drift.returncode == 2, drift.stdout + drift.stderr
    [drifted] = json.loads(drift.stdout)["drifted"]
    assert drifted["address"] == SPARE

    plan = pf("plan", directory, "--json")
    assert plan.returncode == 0, plan.stderr
    actions = {c["address"]: c["action"] for c in json.loads(plan.stdout)["changes"]}
    assert {a: x for a, x in actions.items() if x != "no-op"} == {SPARE: "replace"}, actions

    again = pf("apply", directory, "--auto-approve")
    assert again.returncode == 0, again.stdout + again.stderr
    assert pf("drift", directory).returncode == 0
    assert pf("plan", directory, "--detailed-exitcode").returncode == 0
    templates = boto3.client("ec2", region_name=REGION).describe_launch_templates()
    assert len(templates["LaunchTemplates"]) == 2  # cpu's, and spare's new one
