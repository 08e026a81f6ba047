"""The Cluster's `provider` edited between applies (`local` to `aws`: a copied Cluster file,
a move planned as a one-line change). A refresh asks only the configuration's provider, which
has nothing under the recorded ids, so every record read as "recorded, but missing from the
provider: it will be recreated": `plan` showed the capacity created again on aws, `apply` did
so and overwrote the records, and the local copy ran on, recorded nowhere; `destroy` planned
the records as `gone` and dropped them, touching nothing; `drift` called it deleted. Now each
of them refuses before a cloud is asked, naming the provider the state records and what to do;
nothing changes. With the provider put back, `destroy` deletes as always."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, cloud_holds, tree_digest

LOCAL = """kind: Cluster
name: switch21
provider: local
---
kind: MachinePool
name: mp
machine_types:
  - machine_type: cpu
    launch_templates:
      - instance_type: m5.large
        market_type: ON_DEMAND
    partitions:
      - name: any
        size: 2
        warm: 1
---
kind: ResourcePool
name: rp
capacity:
  gpu: 4
"""
AWS = LOCAL.replace(
    "provider: local\n",
    "provider: aws\nregion: us-east-1\nprovider_settings:\n  image_id: ami-03cf127a\n",
)
# Where a run before this rule met a cloud: moto when one is running, else nowhere reachable.
AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ENDPOINT_URL": os.environ.get("POOLFORM_MOTO_ENDPOINT", "http://127.0.0.1:9"),
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}


@pytest.fixture
def switched(pf: Pf, tmp_path: Path) -> Path:
    (tmp_path / "capacity.yaml").write_text(LOCAL)
    assert pf("apply", tmp_path, "--auto-approve").returncode == 0
    (tmp_path / "capacity.yaml").write_text(AWS)
    return tmp_path


@pytest.mark.parametrize(
    "command",
    [
        ["plan"],
        ["plan", "--no-refresh"],
        ["plan", "--destroy"],
        ["apply", "--auto-approve"],
        ["destroy", "--auto-approve"],
        ["drift"],
        ["apply", "--refresh-only", "--auto-approve"],
    ],
)
def test_a_state_recorded_on_another_provider_is_refused_naming_it(
    pf: Pf, switched: Path, command: list[str]
) -> None:
    held = cloud_holds(switched)  # (first: reading the cloud leaves its WAL files)
    before = tree_digest(switched)
    result = pf(*command, switched, env=AWS_ENV)
    assert result.returncode == 1, result.stdout
    assert (
        "capacity.yaml: error: the state records 1 resource(s) on the local provider "
        "(machine_pool.mp.machine_type.cpu), but the Cluster's provider is now aws"
    ) in result.stderr
    assert "put back `provider: local` and `poolform destroy`" in result.stderr
    assert tree_digest(switched) == before
    assert cloud_holds(switched) == held
    assert "machine_pool.mp.machine_type.cpu" in pf("state", "list", "--chdir", switched).stdout


def test_with_the_provider_put_back_destroy_deletes_it(pf: Pf, switched: Path) -> None:
    (switched / "capacity.yaml").write_text(LOCAL)
    result = pf("destroy", switched, "--auto-approve")
    assert result.returncode == 0, result.stderr
    assert "2 destroyed" in result.stdout
    assert cloud_holds(switched) == 0
    (switched / "capacity.yaml").write_text(AWS)
    plan = pf("plan", "--no-refresh", switched, env=AWS_ENV)
    assert plan.returncode == 0, plan.stderr
    assert "Plan: 2 to add" in plan.stdout


def test_a_pool_naming_the_clusters_provider_is_no_move(pf: Pf, tmp_path: Path) -> None:
    own = LOCAL.replace("name: mp\n", "name: mp\nprovider: local\n")
    (tmp_path / "capacity.yaml").write_text(own)
    assert pf("apply", tmp_path, "--auto-approve").returncode == 0
    result = pf("plan", tmp_path, "--detailed-exitcode")
    assert result.returncode == 0, result.stderr


def test_a_pool_naming_another_provider_than_the_clusters_is_refused(
    pf: Pf, tmp_path: Path
) -> None:
    """One provider is opened per run, the Cluster's: a MachinePool saying `provider: aws`
    under a local Cluster was made in the local simulated cloud and recorded as `aws`."""
    (tmp_path / "capacity.yaml").write_text(
        LOCAL.replace("name: mp\n", "name: mp\nprovider: aws\n")
    )
    for command in (["validate"], ["apply", "--auto-approve"]):
        result = pf(*command, tmp_path)
        assert result.returncode == 1, result.stdout
        assert (
            "capacity.yaml:7:11: error: pool `mp` is on aws, but the Cluster's provider is local"
        ) in result.stderr
    assert not (tmp_path / ".poolform").exists()


def test_state_rm_after_the_switch_says_the_resource_is_still_marked(
    pf: Pf, switched: Path
) -> None:
    """`state rm` asked the new provider to untag the record's ids, which it does not have:
    "The provider no longer has group ig-...", while the local group ran on, tagged."""
    held = cloud_holds(switched)
    result = pf("state", "rm", "machine_pool.mp.machine_type.cpu", "--chdir", switched, env=AWS_ENV)
    assert result.returncode == 0, result.stderr
    assert "no longer has" not in result.stdout
    assert (
        "as this state's (it is on the local provider, and the Cluster's is now aws); plans "
        "report it as unmanaged and never delete it"
    ) in result.stdout
    assert cloud_holds(switched) == held
