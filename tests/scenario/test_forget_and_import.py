"""`state rm` forgets, as in Terraform: nothing is deleted because a record is gone. Automatic
cleanup deletes only what an interrupted apply provably made; anything else carrying this
state's tags is reported with the `poolform import` that takes it back. `import` takes only an
object of the address's type that no state manages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from providers.local.admin import list_instances

WORKERS = "worker_pool.cpu-workers"
CPU = "machine_pool.shared-machines.machine_type.cpu"
QUOTA = "resource_pool.team-quota"
POLICY = "subject_policy.research"


def plan_json(run: Any, directory: Path, *extra: str) -> dict[str, Any]:
    result = run("plan", directory, "--json", *extra)
    assert result.code == 0, result.err
    data: dict[str, Any] = json.loads(result.out)
    return data


def deletions(plan: dict[str, Any]) -> list[str]:
    return [c["address"] for c in plan["changes"] if c["action"] == "delete"]


def ids_of(run: Any, directory: Path, address: str) -> dict[str, str]:
    shown = run("state", "show", address, "--chdir", directory)
    assert shown.code == 0, shown.err
    ids: dict[str, str] = json.loads(shown.out)["provider_ids"]
    return ids


def running_ids(directory: Path) -> set[str]:
    return {i["id"] for i in list_instances(directory / ".poolform")}


def drop_records(run: Any, directory: Path, *addresses: str) -> None:
    """What a hand-edited `state push` (or an older `state rm`) leaves: records gone, the
    resources still carrying this state's tags."""
    pulled = json.loads(run("state", "pull", "--chdir", directory).out)
    pulled["resources"] = [r for r in pulled["resources"] if r["address"] not in addresses]
    path = directory / "pulled.json"
    path.write_text(json.dumps(pulled))
    assert run("state", "push", path, "--chdir", directory).code == 0
    path.unlink()


@pytest.mark.parametrize("address", [WORKERS, CPU, QUOTA])
def test_state_rm_then_plan_deletes_nothing_and_import_takes_it_back(
    run: Any, quickstart: Path, address: str
) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    before = running_ids(quickstart)
    ids = ids_of(run, quickstart, address)

    removed = run("state", "rm", address, "--chdir", quickstart)
    assert removed.code == 0, removed.err
    plan = plan_json(run, quickstart)
    assert deletions(plan) == []
    key = "object" if "object" in ids else "group"
    assert f"poolform import {address} {ids[key]}" in removed.out
    assert [c["address"] for c in plan["changes"]] == [address]  # declared, so planned again
    assert plan["warnings"] == []  # untagged: no plan sees it any more
    drift = run("drift", quickstart, "--json")
    assert drift.code == 0 and json.loads(drift.out)["unmanaged"] == []
    assert running_ids(quickstart) == before

    imported = run("import", address, ids[key], "--chdir", quickstart)
    assert imported.code == 0, imported.err
    assert run("plan", quickstart, "--detailed-exitcode").code == 0
    assert running_ids(quickstart) == before


def test_a_tagged_resource_no_record_accounts_for_is_reported_and_never_deleted(
    run: Any, quickstart: Path
) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    group = ids_of(run, quickstart, WORKERS)["group"]
    workers = {i["id"] for i in list_instances(quickstart / ".poolform", address=WORKERS)}
    (quickstart / "worker-pool.yaml").unlink()  # no longer declared either
    cluster = quickstart / "cluster.yaml"
    cluster.write_text(cluster.read_text().replace("default_aux_pool: cpu-workers\n", ""))
    drop_records(run, quickstart, WORKERS)

    plan = plan_json(run, quickstart)
    # Only the cluster's scheduling defaults change (the default aux pool went with the file).
    assert [(c["address"], c["action"]) for c in plan["changes"]] == [
        ("cluster.quickstart", "update")
    ]
    [warning] = plan["warnings"]
    assert f"poolform import {WORKERS} {group}" in warning
    text = run("plan", quickstart)
    assert "will be deleted" not in text.out and f"poolform import {WORKERS} {group}" in text.out
    assert run("plan", quickstart, "--markdown").out.count(f"poolform import {WORKERS}") == 1
    drift = json.loads(run("drift", quickstart, "--json").out)
    assert [u["address"] for u in drift["unmanaged"]] == [WORKERS]
    assert f"poolform import {WORKERS} {group}" in drift["unmanaged"][0]["reason"]

    assert run("apply", quickstart, "--auto-approve").code == 0
    assert workers <= running_ids(quickstart)

    # a saved plan made while it is reported still applies (the re-plan reports it too)
    saved = run("plan", quickstart, "-out", quickstart / "p.out")
    assert saved.code == 0
    assert run("apply", quickstart / "p.out").code == 0
    assert workers <= running_ids(quickstart)


def test_import_refuses_an_object_of_another_type(run: Any, quickstart: Path) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    policy = ids_of(run, quickstart, POLICY)["object"]
    assert run("state", "rm", QUOTA, "--chdir", quickstart).code == 0

    recorded = run("import", QUOTA, policy, "--chdir", quickstart)
    assert recorded.code == 1 and f"already managed as {POLICY}" in recorded.err
    assert run("state", "rm", POLICY, "--chdir", quickstart).code == 0
    refused = run("import", QUOTA, policy, "--chdir", quickstart)
    assert refused.code == 1
    assert "is a subject policy, not a resource pool" in refused.err
    assert QUOTA not in run("state", "list", "--chdir", quickstart).out
    assert deletions(plan_json(run, quickstart)) == []  # the policy is untouched

    group = ids_of(run, quickstart, WORKERS)["group"]
    assert run("state", "rm", CPU, "--chdir", quickstart).code == 0
    assert run("state", "rm", WORKERS, "--chdir", quickstart).code == 0
    wrong = run("import", CPU, group, "--chdir", quickstart)
    assert wrong.code == 1 and "is a worker pool, not a machine type" in wrong.err


def test_import_refuses_what_this_or_another_state_manages(
    run: Any, quickstart: Path, tmp_path: Path
) -> None:
    assert run("apply", quickstart, "--auto-approve").code == 0
    group = ids_of(run, quickstart, WORKERS)["group"]
    (quickstart / "more.yaml").write_text(
        "kind: WorkerPool\nname: more\npool: {workers: 1}\nresources: {instance_type: c5.xlarge}\n"
    )
    recorded = run("import", "worker_pool.more", group, "--chdir", quickstart)
    assert recorded.code == 1 and f"already managed as {WORKERS}" in recorded.err

    # tagged as this state's worker pool, though no record says so: only its own address
    drop_records(run, quickstart, WORKERS)
    tagged = run("import", "worker_pool.more", group, "--chdir", quickstart)
    assert tagged.code == 1 and f"belongs to this state's {WORKERS}" in tagged.err
    assert run("import", WORKERS, group, "--chdir", quickstart).code == 0

    # another state (another lineage) sharing the cloud: refused until it lets go
    other = tmp_path / "other"
    other.mkdir()
    # (not through its own .poolform/: a state there would be taken for one left behind)
    (other / "shared").symlink_to(quickstart / ".poolform", target_is_directory=True)
    (other / "pool.yaml").write_text((quickstart / "worker-pool.yaml").read_text())
    (other / "cluster.yaml").write_text(
        "kind: Cluster\nname: other\nprovider: local\nstate: {path: shared/other.db}\n"
    )
    foreign = run("import", WORKERS, group, "--chdir", other)
    assert foreign.code == 1, foreign.out
    assert "managed by another poolform state" in foreign.err


def test_state_rm_of_what_is_gone_and_import_of_what_never_was(run: Any, quickstart: Path) -> None:
    from providers.local.admin import delete_group

    assert run("apply", quickstart, "--auto-approve").code == 0
    delete_group(quickstart / ".poolform", WORKERS)
    removed = run("state", "rm", WORKERS, "--chdir", quickstart)
    assert removed.code == 0, removed.err
    assert "no longer has" in removed.out or "no longer marks" in removed.out
    for odd in ("wp-nothing", "\u00e9\u200b", "wp-'; DROP TABLE groups; --"):
        result = run("import", WORKERS, odd, "--chdir", quickstart)
        assert result.code == 1 and "not found" in result.err
    assert WORKERS not in run("state", "list", "--chdir", quickstart).out
