"""The place of the capacity edited between applies: the Cluster's `region` (us-east-1 to
us-west-2), AWS_DEFAULT_REGION when the Cluster names none, a GCP `region` or `project`.

A refresh asks only the new place, which has nothing under the recorded ids: `plan` said every
group was "recorded, but missing from the provider: it will be recreated", `drift` "gone from
the provider", `apply` built the fleet again in the new region while the old one ran on,
recorded nowhere, and `destroy` dropped the records, deleting nothing. Now apply records where
each cloud resource lives, and plan, apply, destroy, drift and `apply --refresh-only` refuse a
state recorded elsewhere before any cloud is asked, naming both places; nothing changes.
A state written before places were recorded plans as before."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import replace
from pathlib import Path

import boto3
import pytest

from state.records import StoredRecord, decode_record, encode_record
from tests.adversarial.conftest import Pf, tree_digest
from tests.adversarial.gcp_endpoint import gcp
from tests.aws.conftest import AMI, aws_env, moto_endpoint
from tests.gcp.fake_cloud import FakeCloud

__all__ = ["aws_env", "gcp", "moto_endpoint"]

CONFIG = f"""kind: Cluster
name: moved25
provider: aws
region: us-east-1
provider_settings: {{image_id: {AMI}, poll_interval: 0}}
---
kind: MachinePool
name: gpu
machine_types:
  - machine_type: cpu
    launch_templates: [{{instance_type: m5.large}}]
    partitions: [{{name: any, size: 1, warm: 0}}]
---
kind: ResourcePool
name: seats
capacity: {{seat: 2}}
"""
MOVED = CONFIG.replace("region: us-east-1", "region: us-west-2")
CPU = "machine_pool.gpu.machine_type.cpu"
COMMANDS = [
    ["plan"],
    ["plan", "--no-refresh"],
    ["plan", "--destroy"],
    ["apply", "--auto-approve"],
    ["destroy", "--auto-approve"],
    ["drift"],
    ["apply", "--refresh-only", "--auto-approve"],
]


def groups(region: str) -> list[str]:
    found = boto3.client("autoscaling", region_name=region).describe_auto_scaling_groups()
    return sorted(g["AutoScalingGroupName"] for g in found["AutoScalingGroups"])


@pytest.fixture
def moved(pf: Pf, tmp_path: Path, aws_env: str) -> Path:
    (tmp_path / "capacity.yaml").write_text(CONFIG)
    applied = pf("apply", tmp_path, "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    (tmp_path / "capacity.yaml").write_text(MOVED)
    return tmp_path


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_state_recorded_in_another_region_is_refused_naming_both(
    pf: Pf, moved: Path, command: list[str]
) -> None:
    before, east = tree_digest(moved), groups("us-east-1")
    result = pf(*command, moved)
    assert result.returncode == 1, result.stdout + result.stderr
    assert (
        "capacity.yaml: error: the state records 1 resource(s) on aws in region us-east-1 "
        f"({CPU}), but the configuration now places them in region us-west-2"
    ) in result.stderr
    assert "nothing was changed" in result.stderr
    assert "put the Cluster's `region`" in result.stderr
    assert "back to region us-east-1 and `poolform destroy` it" in result.stderr
    assert "Traceback" not in result.stderr
    assert tree_digest(moved) == before
    assert groups("us-east-1") == east and len(east) == 1
    assert groups("us-west-2") == []


def test_the_region_from_the_sdk_chain_is_recorded_and_checked_too(
    pf: Pf, tmp_path: Path, aws_env: str
) -> None:
    """No `region` in the Cluster: AWS_DEFAULT_REGION chose it, and changing it moves the
    place as much as editing the YAML does."""
    (tmp_path / "capacity.yaml").write_text(CONFIG.replace("region: us-east-1\n", ""))
    assert pf("apply", tmp_path, "--auto-approve").returncode == 0
    same = pf("plan", tmp_path, "--detailed-exitcode")
    assert same.returncode == 0, same.stdout + same.stderr
    result = pf("plan", tmp_path, env={"AWS_DEFAULT_REGION": "us-west-2"})
    assert result.returncode == 1, result.stdout
    assert "in region us-east-1" in result.stderr
    assert "now places them in region us-west-2" in result.stderr
    assert "AWS_DEFAULT_REGION" in result.stderr


def test_with_the_region_put_back_nothing_changes_and_destroy_deletes(pf: Pf, moved: Path) -> None:
    (moved / "capacity.yaml").write_text(CONFIG)
    plan = pf("plan", moved, "--detailed-exitcode")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    destroyed = pf("destroy", moved, "--auto-approve")
    assert destroyed.returncode == 0, destroyed.stderr
    assert groups("us-east-1") == []
    (moved / "capacity.yaml").write_text(MOVED)
    again = pf("plan", moved, "--no-refresh")
    assert again.returncode == 0, again.stderr
    assert "Plan: 2 to add" in again.stdout, again.stdout


def test_the_place_is_in_no_plan_and_only_cloud_records_carry_it(pf: Pf, moved: Path) -> None:
    (moved / "capacity.yaml").write_text(CONFIG)
    plan = pf("plan", moved, "--destroy", "--json")
    assert plan.returncode == 0, plan.stderr
    assert "@place" not in plan.stdout and "us-east-1" not in plan.stdout
    pulled = json.loads(pf("state", "pull", "--chdir", moved).stdout)
    places = {r["address"]: r.get("place") for r in pulled["resources"]}
    assert places == {CPU: "region us-east-1", "resource_pool.seats": None}


def test_state_rm_after_the_move_says_the_group_is_still_marked(pf: Pf, moved: Path) -> None:
    """`state rm` asked the new region to untag the recorded ids, which it does not have:
    "The provider no longer has group ...", while the group ran on in us-east-1, tagged."""
    result = pf("state", "rm", CPU, "--chdir", moved)
    assert result.returncode == 0, result.stderr
    assert "no longer has" not in result.stdout
    assert (
        "as this state's (it is in region us-east-1, and the configuration names region "
        "us-west-2); plans report it as unmanaged and never delete it"
    ) in result.stdout
    assert len(groups("us-east-1")) == 1


def _forget_places(directory: Path) -> None:
    """The state as a poolform before places were recorded wrote it."""
    path = directory / ".poolform" / "state.db"
    columns = "address, kind, schema_version, attributes, provider_ids, dependencies, tainted"
    with sqlite3.connect(path) as db:
        rows = db.execute(f"SELECT {columns}, checksum FROM resources").fetchall()
        for row in rows:
            old = encode_record(replace(decode_record(StoredRecord(*row)), place=""))
            db.execute(
                "UPDATE resources SET provider_ids = ?, checksum = ? WHERE address = ?",
                (old.provider_ids, old.checksum, old.address),
            )
    db.close()


def test_a_state_without_places_plans_as_before(pf: Pf, moved: Path) -> None:
    _forget_places(moved)
    result = pf("plan", moved, "--no-refresh")
    assert result.returncode == 0, result.stderr  # unknown place: no refusal, as before
    (moved / "capacity.yaml").write_text(CONFIG)
    same = pf("plan", moved, "--detailed-exitcode")
    assert same.returncode == 0, same.stdout + same.stderr
    applied = pf("apply", moved, "--auto-approve")
    assert applied.returncode == 0, applied.stderr
    pulled = json.loads(pf("state", "pull", "--chdir", moved).stdout)
    assert [r.get("place") for r in pulled["resources"]] == [None, None]  # no change, no write


@pytest.mark.parametrize(
    ("edit", "now"),
    [
        (("region: us-central1", "region: us-east1"), "project poolform-test, region us-east1"),
        (("project: poolform-test", "project: other-project"), "project other-project, region"),
    ],
)
def test_a_gcp_state_recorded_in_another_project_or_region_is_refused(
    pf: Pf, gcp: tuple[Path, FakeCloud], edit: tuple[str, str], now: str
) -> None:
    directory, cloud = gcp
    applied = pf("apply", directory, "--auto-approve")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    cluster = directory / "cluster.yaml"
    cluster.write_text(cluster.read_text().replace(*edit))
    before, calls = tree_digest(directory), sum(cloud.calls().values())
    held = (sorted(cloud.groups), sorted(cloud.templates))
    for command in (
        ["plan"],
        ["apply", "--auto-approve"],
        ["destroy", "--auto-approve"],
        ["drift"],
    ):
        result = pf(*command, directory)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "in project poolform-test, region us-central1" in result.stderr
        assert f"now places them in {now}" in result.stderr
        assert tree_digest(directory) == before
    assert (sorted(cloud.groups), sorted(cloud.templates)) == held
    assert sum(cloud.calls().values()) == calls  # refused before the cloud was asked


def test_an_imported_group_is_recorded_where_it_was_found(
    pf: Pf, tmp_path: Path, aws_env: str
) -> None:
    (tmp_path / "capacity.yaml").write_text(CONFIG)
    assert pf("apply", tmp_path, "--auto-approve").returncode == 0
    [group] = groups("us-east-1")
    assert pf("state", "rm", CPU, "--chdir", tmp_path).returncode == 0
    imported = pf("import", CPU, group, "--chdir", tmp_path)
    assert imported.returncode == 0, imported.stdout + imported.stderr
    pulled = json.loads(pf("state", "pull", "--chdir", tmp_path).stdout)
    assert {r["address"]: r.get("place") for r in pulled["resources"]}[CPU] == "region us-east-1"
    (tmp_path / "capacity.yaml").write_text(MOVED)
    assert pf("plan", tmp_path).returncode == 1
