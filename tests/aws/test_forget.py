"""`state rm` on AWS (moto over HTTP): the group, its template and its instances lose poolform's
tags, so the next plan deletes nothing; `import` takes the group back, and refuses a group
another state manages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3

from .conftest import AMI

REGION = "us-west-2"
ADDRESS = "machine_pool.gpu.machine_type.cpu"
CONFIG = {
    "cluster.yaml": f"""\
kind: Cluster
name: demo
provider: aws
region: {REGION}
provider_settings: {{image_id: {AMI}, poll_interval: 0}}
""",
    "pool.yaml": """\
kind: MachinePool
name: gpu
machine_types:
  - machine_type: cpu
    launch_templates: [{instance_type: m5.large}]
    partitions: [{name: any, size: 2, warm: 1}]
  - machine_type: spare  # still recorded after `state rm` of cpu: drift has something to check
    launch_templates: [{instance_type: m5.large}]
    partitions: [{name: any, size: 1, warm: 0}]
""",
}


def poolform_tags(items: list[dict[str, Any]] | None) -> dict[str, str]:
    """poolform's identity tags (its zones bookkeeping tag is not one)."""
    identity = ("poolform:lineage", "poolform:address", "poolform:token")
    return {t["Key"]: t["Value"] for t in items or [] if t["Key"] in identity}


def test_state_rm_untags_and_the_next_plan_deletes_nothing(run, write, aws_env: str) -> None:  # type: ignore[no-untyped-def]
    directory: Path = write(CONFIG)
    applied = run("apply", directory, "--auto-approve")
    assert applied.code == 0, applied.out + applied.err
    ids = json.loads(run("state", "show", ADDRESS, "--chdir", directory).out)["provider_ids"]

    removed = run("state", "rm", ADDRESS, "--chdir", directory)
    assert removed.code == 0, removed.err
    plan = json.loads(run("plan", directory, "--json").out)
    assert [c["action"] for c in plan["changes"]] == ["create"]  # declared, recorded nowhere
    assert plan["warnings"] == []

    asg = boto3.client("autoscaling", region_name=REGION)
    ec2 = boto3.client("ec2", region_name=REGION)
    [group] = asg.describe_auto_scaling_groups(AutoScalingGroupNames=[ids["group"]])[
        "AutoScalingGroups"
    ]
    assert poolform_tags(group["Tags"]) == {}
    instances = [i["InstanceId"] for i in group["Instances"]]
    assert instances
    # (describe_tags, what the tag filters read: moto's describe_launch_templates keeps showing
    # deleted tags)
    for resource in (ids["template"], *instances):
        found = ec2.describe_tags(Filters=[{"Name": "resource-id", "Values": [resource]}])
        assert poolform_tags(found["Tags"]) == {}, resource
    assert run("drift", directory).code == 0

    imported = run("import", ADDRESS, ids["group"], "--chdir", directory)
    assert imported.code == 0, imported.err
    assert run("plan", directory, "--detailed-exitcode").code == 0


def test_import_refuses_a_group_another_state_manages(
    run, write, aws_env: str, tmp_path: Path
) -> None:  # type: ignore[no-untyped-def]
    directory: Path = write(CONFIG)
    assert run("apply", directory, "--auto-approve").code == 0
    group = json.loads(run("state", "show", ADDRESS, "--chdir", directory).out)["provider_ids"]
    other = tmp_path / "other"
    other.mkdir()
    for name, text in CONFIG.items():
        (other / name).write_text(text)
    refused = run("import", ADDRESS, group["group"], "--chdir", other)
    assert refused.code == 1
    assert "managed by another poolform state" in refused.err
    assert run("plan", directory, "--detailed-exitcode").code == 0
