"""`poolform drift`, `plan --refresh-only`, `apply --refresh-only` and saved plans after drift,
on the local provider, with hands-on changes made the way someone in a cloud console would."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema

from providers.local.admin import change_template, delete_group, set_group_size
from tests.conftest import ROOT
from tests.scenario.installed import poolform

DRIFT_SCHEMA = json.loads((ROOT / "reconciler" / "drift" / "drift.schema.json").read_text())
CPU = "machine_pool.shared-machines.machine_type.cpu"  # no warm, one partition of 4: bounds 0..4
H100 = "machine_pool.shared-machines.machine_type.h100"


def drift_json(run, directory: Path) -> tuple[int, dict]:
    result = run("drift", directory, "--json")
    report = json.loads(result.out)
    jsonschema.validate(report, DRIFT_SCHEMA)
    return result.code, report


def converged(run, directory: Path) -> bool:
    return run("plan", directory, "--detailed-exitcode").code == 0


def test_the_full_cycle_on_the_local_provider(quickstart: Path) -> None:
    # The installed command, as the nightly job runs it: exit codes are the contract.
    assert poolform("apply", quickstart, "--auto-approve").returncode == 0
    assert poolform("drift", quickstart).returncode == 0
    change_template(quickstart / ".poolform", CPU, instance_type="m5.2xlarge")

    found = poolform("drift", quickstart)
    assert found.returncode == 2, found.stderr
    assert f"~ {CPU}" in found.stdout
    assert 'instance_type: expected "m5.large", actual "m5.2xlarge"' in found.stdout

    plan = poolform("plan", quickstart)
    assert f"# {CPU} must be replaced (changed outside poolform (instance_type)" in plan.stdout
    assert '~ instance_type = "m5.2xlarge" -> "m5.large" # forces replacement' in plan.stdout
    assert poolform("apply", quickstart, "--auto-approve").returncode == 0
    assert poolform("drift", quickstart).returncode == 0
    assert poolform("plan", quickstart, "--detailed-exitcode").returncode == 0


def test_a_count_the_scheduler_moved_inside_the_bounds_is_not_drift(run, quickstart: Path) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    set_group_size(quickstart / ".poolform", CPU, desired=2)
    code, report = drift_json(run, quickstart)
    assert code == 0 and not report["drift"]
    assert [n["code"] for n in report["notes"]] == ["scheduler_moved_count"]
    assert converged(run, quickstart)


def test_a_count_outside_the_bounds_is_drift_and_plan_brings_it_back(run, quickstart: Path) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    set_group_size(quickstart / ".poolform", CPU, desired=7)
    code, report = drift_json(run, quickstart)
    assert code == 2
    [item] = report["drifted"]
    assert item["attributes"] == [
        {
            "attribute": "desired",
            "expected": "0..4",
            "actual": 7,
            "owner": "configuration",
            "sensitive": False,
        }
    ]
    plan = run("plan", quickstart)
    assert "outside the declared bounds" in plan.out and "1 to change" in plan.out
    assert run("apply", quickstart, "--auto-approve").code == 0
    assert drift_json(run, quickstart)[0] == 0


def test_bounds_changed_by_hand_are_drift_and_plan_resizes_them_back(run, quickstart: Path) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    set_group_size(quickstart / ".poolform", CPU, max_size=9)
    code, report = drift_json(run, quickstart)
    assert code == 2
    assert [
        (a["attribute"], a["expected"], a["actual"]) for a in report["drifted"][0]["attributes"]
    ] == [("max_size", 4, 9)]
    plan = run("plan", quickstart)
    assert "will be updated in place (resize)" in plan.out
    assert "max_size = 9 -> 4" in plan.out
    assert run("apply", quickstart, "--auto-approve").code == 0
    assert drift_json(run, quickstart)[0] == 0 and converged(run, quickstart)


def test_a_deleted_group_is_drift_and_what_is_left_is_not_called_unmanaged(
    run, quickstart: Path
) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    delete_group(quickstart / ".poolform", H100)
    code, report = drift_json(run, quickstart)
    assert code == 2
    [item] = report["drifted"]
    assert item["status"] == "deleted" and "is left" in item["reason"]
    assert report["unmanaged"] == []
    plan = run("plan", quickstart)
    assert "missing from the provider" in plan.out
    assert "part of a recorded resource that it no longer uses" in plan.out
    assert run("apply", quickstart, "--auto-approve").code == 0
    assert drift_json(run, quickstart)[0] == 0 and converged(run, quickstart)


def test_resources_tagged_with_this_state_but_recorded_nowhere_are_listed_apart(
    run, quickstart: Path
) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    # (`state rm` also untags the resource; a pushed state that drops a record does not)
    pulled = json.loads(run("state", "pull", "--chdir", quickstart).out)
    pulled["resources"] = [
        r for r in pulled["resources"] if r["address"] != "resource_pool.team-quota"
    ]
    (quickstart / "pulled.json").write_text(json.dumps(pulled))
    assert run("state", "push", quickstart / "pulled.json", "--chdir", quickstart).code == 0
    code, report = drift_json(run, quickstart)
    assert code == 2
    assert report["drifted"] == []
    assert [u["address"] for u in report["unmanaged"]] == ["resource_pool.team-quota"]
    assert "poolform import resource_pool.team-quota obj-" in report["unmanaged"][0]["reason"]
    text = run("drift", quickstart).out
    assert "Unmanaged (tagged with this state, recorded nowhere):" in text


def test_refresh_only_shows_then_accepts_reality_without_touching_capacity(
    run, quickstart: Path
) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    change_template(quickstart / ".poolform", CPU, instance_type="m5.2xlarge")
    before = run("state", "show", CPU, "--chdir", quickstart).out

    shown = run("plan", quickstart, "--refresh-only", "--detailed-exitcode")
    assert shown.code == 2 and "would record these values in state" in shown.out
    assert run("state", "show", CPU, "--chdir", quickstart).out == before

    accepted = run("apply", quickstart, "--refresh-only", "--auto-approve")
    assert accepted.code == 0, accepted.err
    assert "capacity unchanged" in accepted.out
    record = json.loads(run("state", "show", CPU, "--chdir", quickstart).out)
    assert record["attributes"]["launch_templates"][0]["instance_type"] == "m5.2xlarge"
    assert drift_json(run, quickstart)[0] == 0
    # The configuration still says m5.large: plan now proposes that as an ordinary change.
    plan = run("plan", quickstart)
    assert '~ instance_type = "m5.2xlarge" -> "m5.large"' in plan.out
    assert "changed outside poolform" not in plan.out


def test_refresh_only_on_an_empty_state_creates_nothing(run, quickstart: Path) -> None:
    result = run("apply", quickstart, "--refresh-only", "--auto-approve")
    assert result.code == 0 and "Nothing to accept" in result.out
    assert run("state", "list", "--chdir", quickstart).out == ""
    assert run("plan", quickstart, "--refresh-only", "-out", quickstart / "p").code == 1


def test_a_saved_plan_is_refused_when_an_object_it_touches_drifted(
    run, quickstart: Path, tmp_path: Path
) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    machine_pool = quickstart / "machine-pool.yaml"
    machine_pool.write_text(machine_pool.read_text().replace("size: 2", "size: 3", 1))  # h100
    planfile = tmp_path / "resize.plan"
    assert run("plan", quickstart, "-out", planfile).code == 0

    # Drift of an object the plan does not touch does not void it...
    change_template(quickstart / ".poolform", CPU, instance_type="m5.2xlarge")
    # ...drift of one it touches does.
    change_template(quickstart / ".poolform", H100, instance_type="p5e.48xlarge")
    refused = run("apply", planfile)
    assert refused.code == 1
    assert f"changed since it was made: {H100}" in refused.err
    assert "poolform drift" in refused.err

    change_template(quickstart / ".poolform", H100, instance_type="p5.48xlarge")
    applied = run("apply", planfile)
    assert applied.code == 0, applied.err
    assert "1 changed" in applied.out


def test_markdown_is_ready_for_an_issue(run, quickstart: Path) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    change_template(quickstart / ".poolform", CPU, instance_type="m5.2xlarge")
    result = run("drift", quickstart, "--markdown")
    assert result.code == 2
    marker, heading = result.out.splitlines()[:2]
    assert marker == f"<!-- poolform-drift: {quickstart} -->"  # an issue found again by it
    assert heading == "### :warning: poolform drift"
    assert (
        f'| `{CPU}` | changed | `instance_type` | `"m5.large"` | `"m5.2xlarge"` | configuration |'
        in result.out
    )


def test_a_hand_edited_user_data_is_drift_and_is_never_shown(run, write) -> None:
    directory = write(
        {
            "cluster.yaml": "kind: Cluster\nname: c\nprovider: local\n",
            "pool.yaml": (
                "kind: MachinePool\nname: p\nmachine_types:\n  - machine_type: cpu\n"
                "    launch_templates:\n      - instance_type: m5.large\n"
                "        user_data: echo original-secret\n"
                "    partitions:\n      - name: any\n        size: 1\n"
            ),
        }
    )
    assert run("apply", directory, "--auto-approve").code == 0
    assert drift_json(run, directory)[0] == 0
    change_template(
        directory / ".poolform", "machine_pool.p.machine_type.cpu", user_data="echo hacked-secret"
    )
    text, as_json = run("drift", directory), run("drift", directory, "--json")
    md = run("drift", directory, "--markdown")
    assert text.code == 2
    assert "user_data: expected (sensitive), actual (sensitive, changed)" in text.out
    for output in (text.out, as_json.out, md.out):
        assert "secret" not in output and "sensitive:sha256" not in output
    assert "user_data = (sensitive)" in run("plan", directory).out
