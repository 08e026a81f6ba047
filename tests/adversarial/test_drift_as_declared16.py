"""A change made by hand that the YAML was then changed to match (an operator's fix in the
console, then the same in the repository): reality already is what the configuration
declares. The plan replaced the resource all the same ('changed outside poolform
(instance_type): only a replacement restores it', with an empty body): a machine type's group
and instances, or a resource pool, destroyed and made again for nothing. Only drift the record
cannot hold (a count, a worker pool's chosen type) is restored by a replace now; drift it holds
is diffed, so reality as declared plans nothing. The same after a record edited by hand."""

from __future__ import annotations

import json
from pathlib import Path

from tests.adversarial.conftest import Pf

CPU = "machine_pool.shared-machines.machine_type.cpu"


def test_a_hand_change_the_yaml_then_declares_plans_nothing(pf: Pf, quick: Path) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    changed = pf("local", "change-template", CPU, "--instance-type", "m5.2xlarge", "--chdir", quick)
    assert changed.returncode == 0, changed.stderr
    pool = quick / "machine-pool.yaml"
    pool.write_text(
        pool.read_text().replace("instance_type: m5.large", "instance_type: m5.2xlarge")
    )

    assert pf("drift", quick).returncode == 2  # the record still says m5.large: drift
    plan = pf("plan", quick, "--detailed-exitcode")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "No changes." in plan.stdout

    # A hand change the YAML does not declare is still restored, by the update rule.
    pool.write_text(
        pool.read_text().replace("instance_type: m5.2xlarge", "instance_type: m5.large")
    )
    plan = pf("plan", quick, "--json")
    actions = {c["address"]: c["action"] for c in json.loads(plan.stdout)["changes"]}
    assert actions == {CPU: "replace"}, actions


def test_a_record_edited_away_from_reality_and_configuration_plans_nothing(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    pulled = json.loads(pf("state", "pull", "--chdir", quick).stdout)
    for record in pulled["resources"]:
        if record["address"] == "resource_pool.team-quota":
            record["attributes"]["capacity"]["gpu"] = 20  # reality and the YAML say 16
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(pulled))
    assert pf("state", "push", edited, "--chdir", quick).returncode == 0

    plan = pf("plan", quick, "--detailed-exitcode")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "must be replaced" not in plan.stdout
