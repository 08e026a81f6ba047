"""The lineage check on AWS (moto over HTTP): a configuration copied to another directory
without its state plans nothing twice; the groups the first state made are found by their
address tags, in one batched call per kind, and the plan is refused naming both lineages."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import boto3

from .conftest import AMI

REGION = "us-west-2"
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
    partitions: [{name: any, size: 1, warm: 0}]
""",
}


def group_names() -> list[str]:
    asg = boto3.client("autoscaling", region_name=REGION)
    return sorted(
        g["AutoScalingGroupName"] for g in asg.describe_auto_scaling_groups()["AutoScalingGroups"]
    )


def test_a_copy_without_state_is_refused_naming_both_lineages(  # type: ignore[no-untyped-def]
    run, write, aws_env: str, tmp_path: Path
) -> None:
    first: Path = write(CONFIG)
    assert run("apply", first, "--auto-approve").code == 0
    lineage = json.loads(run("state", "pull", "--chdir", first).out)["lineage"]
    groups = group_names()
    assert len(groups) == 1

    copy = tmp_path / "copy"
    shutil.copytree(first, copy, ignore=shutil.ignore_patterns(".poolform"))
    for args in (("plan", copy), ("apply", copy, "--auto-approve")):
        result = run(*args)
        assert result.code == 1, (args, result.out)
        assert f"under lineage {lineage}" in result.err
        assert "machine_pool.gpu.machine_type.cpu" in result.err
    assert group_names() == groups  # nothing created beside the running group

    # The rightful state is untouched by the check: nothing to do.
    assert run("plan", first, "--detailed-exitcode").code == 0


def test_list_at_finds_every_lineage_in_one_call_per_kind(provider, lineage: str) -> None:  # type: ignore[no-untyped-def]
    from .conftest import machine

    made = [machine(lineage, f"m{i}", warm=0, size=1) for i in range(3)]
    made.append(machine("another-lineage", "m0", warm=0, size=1))
    for spec in made:
        provider.create(spec)
    provider.api_calls.clear()
    found = provider.list_at([made[0].address, made[1].address, "machine_pool.x.machine_type.none"])
    assert dict(provider.api_calls) == {
        "DescribeAutoScalingGroups": 1,
        "DescribeLaunchTemplates": 1,
    }
    held = sorted((o.address, o.tags["poolform:lineage"]) for o in found)
    groups = [h for h in held if h in {(made[0].address, lineage), (made[1].address, lineage)}]
    assert set(groups) == {(made[0].address, lineage), (made[1].address, lineage)}
    assert (made[0].address, "another-lineage") in held  # the same address, another state
    assert all(address != made[2].address for address, _ in held)  # not asked for
