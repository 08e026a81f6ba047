"""The installed `poolform` through a capacity's life on the local provider: create, resize in
place, rolling replace, destroy and re-create, each followed by a plan with no changes."""

from __future__ import annotations

import shutil
from pathlib import Path

from providers.local.admin import list_instances
from tests.scenario.installed import poolform
from tests.scenario.state_view import recorded_addresses


def assert_converged(directory: Path) -> None:
    plan = poolform("plan", directory, "--detailed-exitcode")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "No changes" in plan.stdout


def running(directory: Path) -> dict[str, list[str]]:
    by_type: dict[str, list[str]] = {}
    for instance in list_instances(directory / ".poolform"):
        by_type.setdefault(instance["instance_type"], []).append(instance["id"])
    return by_type


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path.name}"
    path.write_text(text.replace(old, new, 1))


def test_create_resize_replace_destroy_recreate(quickstart: Path) -> None:
    created = poolform("apply", quickstart, "--auto-approve")
    assert created.returncode == 0, created.stderr
    assert "Apply complete! Resources: 8 added" in created.stdout  # with cluster.quickstart
    assert_converged(quickstart)
    workers = running(quickstart)["c5.xlarge"]
    assert len(workers) == 2
    assert all((quickstart / ".poolform" / "workers" / w / "setup.log").exists() for w in workers)

    edit(quickstart / "worker-pool.yaml", "workers: 2", "workers: 3")
    resized = poolform("apply", quickstart, "--auto-approve")
    assert resized.returncode == 0, resized.stderr
    assert "will be updated in place (resize)" in resized.stdout
    assert set(workers) < set(running(quickstart)["c5.xlarge"])  # the old workers were kept
    assert_converged(quickstart)

    before = set(running(quickstart)["p5.48xlarge"])
    edit(
        quickstart / "machine-pool.yaml",
        "instance_type: p5.48xlarge",
        "instance_type: p5e.48xlarge",
    )
    replaced = poolform("apply", quickstart, "--auto-approve")
    assert replaced.returncode == 0, replaced.stderr
    assert "forces replacement" in replaced.stdout and "1 replaced" in replaced.stdout
    after = running(quickstart)
    assert "p5.48xlarge" not in after and len(after["p5e.48xlarge"]) == len(before)
    assert_converged(quickstart)

    destroyed = poolform("destroy", quickstart, "--auto-approve")
    assert destroyed.returncode == 0, destroyed.stderr
    assert "8 destroyed" in destroyed.stdout
    assert running(quickstart) == {}
    assert recorded_addresses(quickstart) == []

    recreated = poolform("apply", quickstart, "--auto-approve")
    assert recreated.returncode == 0, recreated.stderr
    assert_converged(quickstart)


def test_apply_without_a_terminal_needs_auto_approve(quickstart: Path) -> None:
    result = poolform("apply", quickstart)
    assert result.returncode == 1
    assert "--auto-approve" in result.stderr
    assert not (quickstart / ".poolform").exists()  # no cloud made, so nothing running there


def test_saved_plan_applies_exactly_once(quickstart: Path, tmp_path: Path) -> None:
    planfile = tmp_path / "plan.out"
    assert poolform("plan", quickstart, "-out", planfile).returncode == 0
    first = poolform("apply", planfile)
    assert first.returncode == 0, first.stderr
    again = poolform("apply", planfile)
    assert again.returncode == 1
    assert "state changed since this plan was made" in again.stderr


def test_resources_deleted_behind_our_back_are_recreated(quickstart: Path) -> None:
    from providers.local.admin import delete_group

    assert poolform("apply", quickstart, "--auto-approve").returncode == 0
    delete_group(quickstart / ".poolform", "worker_pool.cpu-workers")
    plan = poolform("plan", quickstart)
    assert "missing from the provider" in plan.stdout
    assert poolform("apply", quickstart, "--auto-approve").returncode == 0
    assert_converged(quickstart)


def test_import_takes_an_existing_resource_under_management(
    quickstart: Path, tmp_path: Path
) -> None:
    # A resource made by another state (another lineage), then imported into this one.
    other = tmp_path / "other"
    shutil.copytree(quickstart, other)
    assert (
        poolform(
            "apply", other, "--auto-approve", "--target", "resource_pool.team-quota"
        ).returncode
        == 0
    )
    state = poolform("state", "show", "resource_pool.team-quota", "--chdir", other)
    object_id = __import__("json").loads(state.stdout)["provider_ids"]["object"]
    # Another state's resource is refused until that state lets it go.
    forgotten = poolform("state", "rm", "resource_pool.team-quota", "--chdir", other)
    assert forgotten.returncode == 0, forgotten.stderr
    (quickstart / ".poolform").mkdir(mode=0o700)
    shutil.copy(other / ".poolform" / "local-cloud.db", quickstart / ".poolform" / "local-cloud.db")

    imported = poolform("import", "resource_pool.team-quota", object_id, "--chdir", quickstart)
    assert imported.returncode == 0, imported.stderr
    plan = poolform("plan", quickstart, "--json")
    changes = {c["address"]: c["action"] for c in __import__("json").loads(plan.stdout)["changes"]}
    assert "resource_pool.team-quota" not in changes  # adopted as it is, not created again
    assert (
        poolform("import", "resource_pool.team-quota", object_id, "--chdir", quickstart).returncode
        == 1
    )


def test_a_template_changed_by_hand_is_put_back(quickstart: Path) -> None:
    assert poolform("apply", quickstart, "--auto-approve").returncode == 0
    address = "machine_pool.shared-machines.machine_type.h100"
    changed = poolform(
        "local",
        "change-template",
        address,
        "--instance-type",
        "p5e.48xlarge",
        "--chdir",
        quickstart,
    )
    assert changed.returncode == 0, changed.stderr
    terminated = running(quickstart)["c5.xlarge"][0]
    assert poolform("local", "terminate", terminated, "--chdir", quickstart).returncode == 0
    assert poolform("apply", quickstart, "--auto-approve").returncode == 0
    assert_converged(quickstart)
