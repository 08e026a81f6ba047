"""The local provider's groups behave like Auto Scaling groups: they bring the running count back
to what they want. A machine type's group heals on the next call that reads or changes it; a
worker pool's group (whose setup needs secrets the local cloud never keeps) is restored by
`apply`, and until then drift lists the shortfall as a note and plan shows the fix."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from providers.local.admin import list_instances, set_capacity

CLUSTER = "kind: Cluster\nname: c\nprovider: local\n"
WORKERS = """kind: WorkerPool
name: fixed
pool: {workers: 10}
resources: {instance_type: c5.xlarge}
setup: echo ready
"""
ELASTIC = """kind: WorkerPool
name: elastic
pool: {min_workers: 1, max_workers: 4}
resources: {instance_type: c5.xlarge}
"""
POOL = """kind: MachinePool
name: p
machine_types:
  - machine_type: cpu
    launch_templates: [{instance_type: m5.large}]
    partitions: [{name: any, size: 4, warm: 1}]
"""
CPU = "machine_pool.p.machine_type.cpu"


def running(directory: Path, address: str) -> list[str]:
    return [i["id"] for i in list_instances(directory / ".poolform", address=address)]


def notes(run: Any, directory: Path) -> tuple[int, list[dict[str, Any]]]:
    result = run("drift", directory, "--json")
    found: list[dict[str, Any]] = json.loads(result.out)["notes"]
    return result.code, found


def test_a_fixed_worker_pool_that_lost_a_worker_is_restored_by_apply(run: Any, write: Any) -> None:
    directory: Path = write({"cluster.yaml": CLUSTER, "workers.yaml": WORKERS})
    assert run("apply", directory, "--auto-approve").code == 0
    workers = running(directory, "worker_pool.fixed")
    assert len(workers) == 10
    assert run("local", "terminate", workers[0], "--chdir", directory).code == 0

    code, found = notes(run, directory)
    assert code == 0  # not drift: the group's own business, as a cloud's would be
    assert [(n["address"], n["code"]) for n in found] == [("worker_pool.fixed", "shortfall")]
    assert "9 of 10 instances run" in found[0]["message"]
    assert "9 of 10 instances run" in run("drift", directory).out

    plan = run("plan", directory, "--detailed-exitcode")
    assert plan.code == 2
    assert "9 of 10 instances run; apply launches the missing 1" in plan.out
    assert run("apply", directory, "--auto-approve").code == 0
    assert len(running(directory, "worker_pool.fixed")) == 10
    assert run("plan", directory, "--detailed-exitcode").code == 0
    assert notes(run, directory) == (0, [])


def test_a_worker_pool_keeps_the_count_the_scheduler_asked_for(run: Any, write: Any) -> None:
    directory: Path = write({"cluster.yaml": CLUSTER, "elastic.yaml": ELASTIC})
    assert run("apply", directory, "--auto-approve").code == 0
    moved = run(
        "local", "resize-group", "worker_pool.elastic", "--desired", "3", "--chdir", directory
    )
    assert moved.code == 0
    assert len(running(directory, "worker_pool.elastic")) == 1
    assert run("apply", directory, "--auto-approve").code == 0
    assert len(running(directory, "worker_pool.elastic")) == 3
    assert run("plan", directory, "--detailed-exitcode").code == 0


def test_a_machine_type_group_heals_on_the_next_call(run: Any, write: Any) -> None:
    directory: Path = write({"cluster.yaml": CLUSTER, "pool.yaml": POOL})
    assert run("apply", directory, "--auto-approve").code == 0
    moved = run("local", "resize-group", CPU, "--desired", "3", "--chdir", directory)
    assert moved.code == 0
    assert len(running(directory, CPU)) == 1  # the numbers changed, nothing launched yet
    code, found = notes(run, directory)  # the next call that reads the group heals it
    assert code == 0 and [n["code"] for n in found] == ["scheduler_moved_count"]
    assert len(running(directory, CPU)) == 3

    lost = running(directory, CPU)[0]
    assert run("local", "terminate", lost, "--chdir", directory).code == 0
    assert run("plan", directory, "--detailed-exitcode").code == 0
    healed = running(directory, CPU)
    assert len(healed) == 3 and lost not in healed


def test_a_group_that_cannot_heal_yet_is_a_note_until_capacity_returns(
    run: Any, write: Any
) -> None:
    directory: Path = write({"cluster.yaml": CLUSTER, "pool.yaml": POOL})
    assert run("apply", directory, "--auto-approve").code == 0
    [only] = running(directory, CPU)
    set_capacity(directory / ".poolform", "m5.large", "ON_DEMAND", 0)
    assert run("local", "terminate", only, "--chdir", directory).code == 0

    code, found = notes(run, directory)
    assert code == 0
    assert [(n["code"], n["message"]) for n in found] == [
        ("shortfall", "0 of 1 instances run: the group is launching the missing 1")
    ]
    set_capacity(directory / ".poolform", "m5.large", "ON_DEMAND", None)
    assert run("apply", directory, "--auto-approve").code == 0
    assert len(running(directory, CPU)) == 1
    assert notes(run, directory) == (0, [])
