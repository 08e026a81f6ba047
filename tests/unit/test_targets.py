"""`--target ADDR` matches whole addresses; a machine pool's address selects its machine types."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.plan.targets import target_matches

POOLS = """kind: ResourcePool
name: team-quota
capacity: {gpu: 8}
---
kind: ResourcePool
name: team-quota.archive
capacity: {gpu: 2}
---
kind: MachinePool
name: gpu
machine_types:
  - machine_type: a
    launch_templates: [{instance_type: m5.large}]
    partitions: [{name: any, size: 1}]
  - machine_type: b
    launch_templates: [{instance_type: m5.large}]
    partitions: [{name: any, size: 1}]
"""


@pytest.mark.parametrize(
    ("address", "target", "selected"),
    [
        ("resource_pool.team-quota", "resource_pool.team-quota", True),
        ("resource_pool.team-quota.archive", "resource_pool.team-quota", False),
        ("resource_pool.team-quota", "resource_pool.team", False),
        ("resource_pool.team-quota", "resource_pool", False),
        ("machine_pool.gpu.machine_type.a", "machine_pool.gpu", True),
        ("machine_pool.gpu.machine_type.a", "machine_pool.gpu.machine_type.a", True),
        ("machine_pool.gpu.machine_type.a", "machine_pool.gpu.machine_type", False),
        ("machine_pool.gpu.machine_type.ab", "machine_pool.gpu.machine_type.a", False),
        ("machine_pool.gpu.x.machine_type.a", "machine_pool.gpu", False),
        ("machine_pool.gpu.machine_type.a.machine_type.c", "machine_pool.gpu", False),
        # A target naming a machine type is that machine type, never a pool spelled like one.
        (
            "machine_pool.gpu.machine_type.a.machine_type.c",
            "machine_pool.gpu.machine_type.a",
            False,
        ),
        ("subject_policy.gpu.machine_type.a", "subject_policy.gpu", False),
    ],
)
def test_a_target_is_a_whole_address_or_a_machine_pool(
    address: str, target: str, selected: bool
) -> None:
    assert target_matches(address, target) is selected


def planned(run, directory: Path, *targets: str) -> list[str]:
    args = [f"--target={t}" for t in targets]
    result = run("plan", directory, "--json", "--no-refresh", *args)
    assert result.code == 0, result.err
    return [c["address"] for c in json.loads(result.out)["changes"]]


def test_a_resource_pool_target_leaves_a_pool_whose_name_extends_it(run, write) -> None:
    directory = write({"pools.yaml": POOLS})
    assert planned(run, directory, "resource_pool.team-quota") == ["resource_pool.team-quota"]


def test_a_machine_pool_target_selects_its_machine_types_only(run, write) -> None:
    directory = write({"pools.yaml": POOLS})
    assert planned(run, directory, "machine_pool.gpu") == [
        "machine_pool.gpu.machine_type.a",
        "machine_pool.gpu.machine_type.b",
    ]


def test_a_target_that_is_only_a_prefix_matches_nothing(run, write) -> None:
    directory = write({"pools.yaml": POOLS})
    result = run("plan", directory, "--no-refresh", "--target", "resource_pool.team")
    assert result.code == 1
    assert "--target resource_pool.team matches no resource" in result.err
