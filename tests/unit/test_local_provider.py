"""The local provider: a simulated cloud in SQLite beside the state, with real workers."""

from __future__ import annotations

import stat
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from providers.local import LocalProvider, admin, upkeep
from providers.protocol import (
    TAG_ADDRESS,
    TAG_LINEAGE,
    ErrorKind,
    Observed,
    ProviderError,
    ResourceSpec,
    RollingSpec,
)

LINEAGE = "lineage-1"
MT = "machine_pool.gpu.machine_type.h100"
WP = "worker_pool.cpu"


def machine(
    warm: int,
    size: int,
    *,
    address: str = MT,
    instance_type: str = "p5.48xlarge",
    market: str = "ON_DEMAND",
    token: str | None = None,
) -> ResourceSpec:
    attributes = {
        "provider": "local",
        "launch_templates": [
            {
                "instance_type": instance_type,
                "market_type": market,
                "advanced_instance_config": {},
                "zones": [],
                "user_data": None,
            }
        ],
        "partitions": [{"name": "p", "size": size, "warm": warm, "rules": []}],
        "min_size": warm,
        "max_size": size,
        "max_surge": 1,
        "max_unavailable": 0,
        "recycle_policy": None,
    }
    return ResourceSpec(address, "machine_type", attributes, LINEAGE, token or uuid.uuid4().hex)


def workers(
    count: int, setup: str | None, *, envs: dict[str, str] | None = None, **extra: Any
) -> ResourceSpec:
    attributes = {
        "provider": "local",
        "pool": {"workers": count, "min_workers": None, "max_workers": None},
        "resources": {"instance_type": "c5.xlarge"},
        "setup": setup,
        "file_mounts": {},
        "workdir": None,
        "envs": envs or {},
        "secrets": {},
        **extra,
    }
    return ResourceSpec(WP, "worker_pool", attributes, LINEAGE, uuid.uuid4().hex)


def policy(priority: int) -> ResourceSpec:
    attributes = {"subject": "team/a", "pool": "quota", "priority": priority}
    return ResourceSpec("subject_policy.a", "subject_policy", attributes, LINEAGE, uuid.uuid4().hex)


@pytest.fixture
def state_dir(tmp_path: Path) -> Path:
    return tmp_path / ".poolform"


@pytest.fixture
def events() -> list[dict[str, Any]]:
    return []


@pytest.fixture
def provider(state_dir: Path, events: list[dict[str, Any]]) -> LocalProvider:
    return LocalProvider(settings={}, state_dir=state_dir, environ={}, on_event=events.append)


def by_address(provider: LocalProvider) -> dict[str, Observed]:
    return {o.address: o for o in provider.list(LINEAGE)}


def running(state_dir: Path, address: str) -> list[dict[str, Any]]:
    return admin.list_instances(state_dir, address=address)


def test_files_are_private(provider: LocalProvider, state_dir: Path) -> None:
    assert stat.S_IMODE(state_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE((state_dir / "local-cloud.db").stat().st_mode) == 0o600


def test_create_is_idempotent_by_token(provider: LocalProvider, state_dir: Path) -> None:
    spec = machine(2, 4)
    first = provider.create(spec)
    assert provider.create(spec) == first
    again = LocalProvider(settings={}, state_dir=state_dir, environ={}).create(spec)
    assert again.provider_ids == first.provider_ids
    assert len(provider.list(LINEAGE)) == 1
    assert len(running(state_dir, MT)) == 2
    assert first.attributes["running"] == 2
    assert set(first.provider_ids) == {"template", "group"}


def test_create_from_two_threads_makes_one_copy(provider: LocalProvider, state_dir: Path) -> None:
    spec = workers(2, "sleep 0.05")
    barrier, results = threading.Barrier(2), []

    def create() -> None:
        barrier.wait()
        results.append(provider.create(spec))

    threads = [threading.Thread(target=create) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results[0].provider_ids == results[1].provider_ids
    assert len(running(state_dir, WP)) == 2
    assert len(list((state_dir / "workers").iterdir())) == 2  # the loser's dirs are gone


def test_every_instance_carries_lineage_and_address(
    provider: LocalProvider, state_dir: Path
) -> None:
    provider.create(machine(2, 2))
    provider.create(workers(1, None))
    instances = admin.list_instances(state_dir)
    assert len(instances) == 3
    for instance in instances:
        assert instance["tags"][TAG_LINEAGE] == LINEAGE
        assert instance["tags"][TAG_ADDRESS] == instance["address"]


def test_list_is_one_query_per_table(provider: LocalProvider) -> None:
    for n in range(4):
        provider.create(machine(1, 2, address=f"machine_pool.p.machine_type.t{n}"))
    provider.create(workers(1, None))
    provider.create(policy(1))
    statements: list[str] = []
    provider.cloud.trace = statements.append
    found = provider.list(LINEAGE)
    assert len(found) == 6
    selects = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
    assert len(selects) == 3  # templates, groups (with instance counts), objects
    assert provider.list("another-lineage") == []


def test_resize_terminates_idle_first(provider: LocalProvider, state_dir: Path) -> None:
    ids = provider.create(machine(3, 5)).provider_ids
    busy = running(state_dir, MT)[0]["id"]
    admin.set_idle(state_dir, busy, False)
    shrunk = provider.update(machine(1, 5), ids)
    assert [i["id"] for i in running(state_dir, MT)] == [busy]
    assert (shrunk.attributes["min_size"], shrunk.attributes["running"]) == (1, 1)
    grown = provider.update(machine(4, 6), ids)
    assert (grown.attributes["max_size"], grown.attributes["running"]) == (6, 4)
    capped = provider.update(machine(0, 0), ids)  # above the new maximum even busy ones go
    assert capped.attributes["running"] == 0


def test_replace_rolls_in_batches_idle_first(
    provider: LocalProvider, state_dir: Path, events: list[dict[str, Any]]
) -> None:
    old = provider.create(machine(5, 8)).provider_ids
    busy = running(state_dir, MT)[0]["id"]
    admin.set_idle(state_dir, busy, False)
    events.clear()
    new = provider.replace(machine(5, 8, instance_type="p4d.24xlarge"), old, RollingSpec(2, False))
    batches = [e for e in events if e["event"] == "batch"]
    assert [len(b["launched"]) for b in batches] == [2, 2, 1]
    assert [len(b["terminated"]) for b in batches] == [2, 2, 1]
    assert batches[-1]["terminated"] == [busy]  # the busy one goes last
    kinds = [e["event"] for e in events if e["event"] in ("launch", "terminate")]
    assert kinds[:2] == ["launch", "terminate"]  # create before destroy
    assert set(new.provider_ids.values()).isdisjoint(old.values())
    assert {i["instance_type"] for i in running(state_dir, MT)} == {"p4d.24xlarge"}
    assert list(by_address(provider)) == [MT]
    assert by_address(provider)[MT].provider_ids == new.provider_ids


def test_replace_destroy_first(
    provider: LocalProvider, state_dir: Path, events: list[dict[str, Any]]
) -> None:
    old = provider.create(machine(2, 2)).provider_ids
    events.clear()
    provider.replace(machine(2, 2, market="SPOT"), old, RollingSpec(1, True))
    kinds = [e["event"] for e in events if e["event"] in ("launch", "terminate")]
    assert kinds == ["terminate", "launch", "terminate", "launch"]
    assert {i["market_type"] for i in running(state_dir, MT)} == {"SPOT"}


def test_spot_capacity_runs_out(state_dir: Path) -> None:
    capacity = {"p5.48xlarge": {"SPOT": 4}}
    provider = LocalProvider(settings={"capacity": capacity}, state_dir=state_dir, environ={})
    provider.create(machine(3, 4, market="SPOT"))
    with pytest.raises(ProviderError) as caught:
        provider.create(machine(2, 2, address="machine_pool.b.machine_type.x", market="SPOT"))
    assert caught.value.kind is ErrorKind.CAPACITY
    assert "spot capacity for p5.48xlarge exhausted (3 of 4 in use" in caught.value.message
    assert caught.value.address == "machine_pool.b.machine_type.x"
    assert len(provider.list(LINEAGE)) == 1  # nothing half-made
    provider.create(machine(2, 2, address="machine_pool.c.machine_type.y"))  # on-demand is fine
    admin.set_capacity(state_dir, "p5.48xlarge", "ON_DEMAND", 2)  # behind poolform's back
    with pytest.raises(ProviderError, match="on-demand capacity"):
        provider.create(machine(1, 1, address="machine_pool.d.machine_type.z"))


def test_unknown_instance_type_is_permanent(provider: LocalProvider) -> None:
    with pytest.raises(ProviderError) as caught:
        provider.create(machine(1, 1, instance_type="p9.huge"))
    assert caught.value.kind is ErrorKind.PERMANENT


def test_injected_fault_happens_before_any_change(state_dir: Path) -> None:
    slept: list[float] = []
    faulty = LocalProvider(
        settings={"fault_rate": 1.0, "latency_ms": 5},
        state_dir=state_dir,
        sleep=slept.append,
        environ={},
    )
    with pytest.raises(ProviderError) as caught:
        faulty.create(machine(2, 2))
    assert caught.value.kind is ErrorKind.RETRYABLE
    assert "injected fault (throttled)" in str(caught.value)
    assert slept == [0.005]
    clean = LocalProvider(settings={}, state_dir=state_dir, environ={})
    assert clean.list(LINEAGE) == []
    assert admin.list_instances(state_dir) == []


def test_environment_wins_over_settings(state_dir: Path) -> None:
    env = {"POOLFORM_LOCAL_FAULT_RATE": "1"}
    provider = LocalProvider(settings={"fault_rate": 0}, state_dir=state_dir, environ=env)
    with pytest.raises(ProviderError, match="injected fault"):
        provider.list(LINEAGE)
    with pytest.raises(ProviderError, match="did you mean 'fault_rate'"):
        LocalProvider(settings={"fault_rat": 1}, state_dir=state_dir, environ={})


def test_worker_setup_really_runs(provider: LocalProvider, state_dir: Path) -> None:
    setup = 'echo "$POOLFORM_WORKER_ID $GREETING $TOKEN" > hello.txt'
    spec = workers(2, setup, envs={"GREETING": "hi"}, secrets={"TOKEN": "s3cret"})
    observed = provider.create(spec)
    assert observed.provider_ids["group"].startswith("wp-")
    assert observed.attributes["secret_names"] == ["TOKEN"]
    for instance in running(state_dir, WP):
        text = (Path(instance["workdir"]) / "hello.txt").read_text()
        assert text == f"{instance['id']} hi s3cret\n"
    assert b"s3cret" not in (state_dir / "local-cloud.db").read_bytes()
    resized = provider.update(workers(3, setup, envs={"GREETING": "hi"}), observed.provider_ids)
    assert resized.attributes["running"] == 3


def test_a_pool_path_without_bash_still_runs_its_setup(
    provider: LocalProvider, state_dir: Path, tmp_path: Path
) -> None:
    """`envs: {PATH: <its tools>}` is for the setup's commands: the setup's own bash is found
    on poolform's PATH (apply failed with `No such file or directory: 'bash'`)."""
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "greet").write_text("#!/bin/sh\necho from-tools\n")
    (tools / "greet").chmod(0o755)
    observed = provider.create(workers(1, "greet > hello.txt", envs={"PATH": str(tools)}))
    assert observed.attributes["running"] == 1
    [instance] = running(state_dir, WP)
    assert (Path(instance["workdir"]) / "hello.txt").read_text() == "from-tools\n"


def test_failing_setup_is_permanent_with_the_log_tail(
    provider: LocalProvider, state_dir: Path
) -> None:
    with pytest.raises(ProviderError) as caught:
        provider.create(workers(2, "echo preparing; echo boom >&2; exit 3"))
    assert caught.value.kind is ErrorKind.PERMANENT
    assert "exited with status 3" in caught.value.message
    assert "boom" in caught.value.message
    assert provider.list(LINEAGE) == []
    assert list((state_dir / "workers").iterdir()) == []


def test_setup_timeout(state_dir: Path) -> None:
    provider = LocalProvider(settings={"setup_timeout": 0.2}, state_dir=state_dir, environ={})
    with pytest.raises(ProviderError, match=r"timed out after 0\.2s"):
        provider.create(workers(1, "sleep 5"))


def test_admin_changes_show_in_list(provider: LocalProvider, state_dir: Path) -> None:
    ids = provider.create(machine(2, 4)).provider_ids
    lost = running(state_dir, MT)[0]["id"]
    admin.terminate_instance(state_dir, lost)
    assert len(running(state_dir, MT)) == 1
    # the group heals on the next call that reads it, as an Auto Scaling group would have
    assert by_address(provider)[MT].attributes["running"] == 2
    assert lost not in {i["id"] for i in running(state_dir, MT)}
    admin.change_template(state_dir, MT, instance_type="p4de.24xlarge")
    seen = by_address(provider)[MT].attributes
    assert (seen["instance_type"], seen["template_version"]) == ("p4de.24xlarge", 2)
    admin.delete_group(state_dir, MT)
    orphan = by_address(provider)[MT]
    assert dict(orphan.provider_ids) == {"template": ids["template"]}
    assert running(state_dir, MT) == []
    with pytest.raises(ProviderError) as caught:
        provider.update(machine(2, 4), ids)
    assert caught.value.kind is ErrorKind.NOT_FOUND
    provider.delete(MT, "machine_type", ids, lineage=LINEAGE)  # the template left behind
    with pytest.raises(ProviderError) as again:
        provider.delete(MT, "machine_type", ids, lineage=LINEAGE)
    assert again.value.kind is ErrorKind.NOT_FOUND
    assert provider.list(LINEAGE) == []


def test_control_plane_objects(provider: LocalProvider) -> None:
    created = provider.create(policy(1))
    assert created.provider_ids["object"].startswith("obj-")
    updated = provider.update(policy(5), created.provider_ids)
    assert updated.attributes["priority"] == 5
    replaced = provider.replace(policy(7), created.provider_ids, RollingSpec(1, False))
    assert replaced.provider_ids != created.provider_ids
    assert [o.provider_ids for o in provider.list(LINEAGE)] == [replaced.provider_ids]
    provider.delete("subject_policy.a", "subject_policy", replaced.provider_ids, lineage=LINEAGE)
    with pytest.raises(ProviderError) as caught:
        provider.update(policy(5), replaced.provider_ids)
    assert caught.value.kind is ErrorKind.NOT_FOUND


def test_a_second_provider_sees_the_first_ones_cloud(
    provider: LocalProvider, state_dir: Path
) -> None:
    provider.create(machine(1, 2))
    provider.create(workers(1, None))
    provider.create(policy(1))
    other = LocalProvider(settings={}, state_dir=state_dir, environ={})
    assert other.list(LINEAGE) == provider.list(LINEAGE)
    assert len(other.list(LINEAGE)) == 3


class Killed(BaseException):
    """What kill -9 looks like from inside: the call stops where it is, nothing cleans up."""


def killer(events: list[dict[str, Any]], event: str, after: int) -> Any:
    seen = []

    def on_event(item: dict[str, Any]) -> None:
        events.append(item)
        if item["event"] == event:
            seen.append(item)
            if len(seen) == after:
                raise Killed

    return on_event


@pytest.mark.parametrize("destroy_first", [False, True])
def test_a_replace_killed_mid_roll_is_adopted_by_the_resumed_replace(
    state_dir: Path, destroy_first: bool
) -> None:
    events: list[dict[str, Any]] = []
    first = LocalProvider(settings={}, state_dir=state_dir, environ={})
    old = first.create(machine(4, 6)).provider_ids
    spec = machine(4, 6, instance_type="p4d.24xlarge")
    dying = LocalProvider(
        settings={}, state_dir=state_dir, environ={}, on_event=killer(events, "batch", 2)
    )
    with pytest.raises(Killed):
        dying.replace(spec, old, RollingSpec(1, destroy_first))
    groups = {o.provider_ids["group"] for o in first.list(LINEAGE)}
    assert len(groups) == 2  # the old group and the half-made one

    resumed = LocalProvider(settings={}, state_dir=state_dir, environ={}).replace(
        spec, old, RollingSpec(1, destroy_first)
    )
    assert resumed.provider_ids["group"] in groups  # adopted, not a third group
    [only] = first.list(LINEAGE)
    assert only.provider_ids == resumed.provider_ids
    instances = running(state_dir, MT)
    assert len(instances) == 4  # the count it rolled, whatever the killed run had done
    assert {i["instance_type"] for i in instances} == {"p4d.24xlarge"}
    assert sorted(p.name for p in (state_dir / "workers").iterdir()) == sorted(
        i["id"] for i in instances
    )
    assert first.replace(spec, old, RollingSpec(1, destroy_first)) == resumed  # token: done


def test_a_create_resumed_on_a_half_made_replacement_adopts_it(state_dir: Path) -> None:
    # The old group was deleted by hand after the replace died: the plan recreates the
    # address, with the intent's token, and the create takes the half-made group.
    events: list[dict[str, Any]] = []
    first = LocalProvider(settings={}, state_dir=state_dir, environ={})
    old = first.create(machine(3, 3)).provider_ids
    spec = machine(3, 3, instance_type="p4d.24xlarge")
    dying = LocalProvider(
        settings={}, state_dir=state_dir, environ={}, on_event=killer(events, "batch", 1)
    )
    with pytest.raises(Killed):
        dying.replace(spec, old, RollingSpec(1, False))
    first.delete(MT, "machine_type", old, lineage=LINEAGE)
    created = first.create(spec)
    [only] = first.list(LINEAGE)
    assert only.provider_ids == created.provider_ids
    assert created.attributes["running"] == 3


def test_workers_a_killed_setup_left_are_ended_by_the_next_change(state_dir: Path) -> None:

    # A poolform killed while `setup` ran: its directory and its setup process stay behind.
    script = (
        "import sys, uuid\n"
        "from providers.local import LocalProvider\n"
        "from tests.unit.test_local_provider import workers\n"
        f"p = LocalProvider(settings={{}}, state_dir={str(state_dir)!r}, environ={{}})\n"
        "p.create(workers(2, 'sleep 300'))\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).parents[2])
    pid_files: list[Path] = []
    while len(pid_files) < 2:
        assert process.poll() is None
        time.sleep(0.02)
        pid_files = list((state_dir / "workers").glob("*/setup.pid"))
    process.kill()
    process.wait()
    left = {p.parent.name for p in pid_files}
    assert all(upkeep.processes_of(worker) for worker in left)

    provider = LocalProvider(settings={}, state_dir=state_dir, environ={})
    provider.create(machine(1, 1))
    assert not any(upkeep.processes_of(worker) for worker in left)
    assert {p.name for p in (state_dir / "workers").iterdir()} == {
        i["id"] for i in running(state_dir, MT)
    }


def test_a_half_made_group_for_a_declaration_changed_since_is_discarded(
    state_dir: Path,
) -> None:
    # Killed while rolling to p4d; the configuration moved on to p5e before the next apply,
    # which re-runs the replace with the same intent token.
    events: list[dict[str, Any]] = []
    first = LocalProvider(settings={}, state_dir=state_dir, environ={})
    old = first.create(machine(3, 3)).provider_ids
    token = uuid.uuid4().hex
    dying = LocalProvider(
        settings={}, state_dir=state_dir, environ={}, on_event=killer(events, "batch", 1)
    )
    with pytest.raises(Killed):
        dying.replace(
            machine(3, 3, instance_type="p4d.24xlarge", token=token), old, RollingSpec(1, False)
        )
    resumed = first.replace(
        machine(3, 3, instance_type="p5e.48xlarge", token=token), old, RollingSpec(1, False)
    )
    [only] = first.list(LINEAGE)
    assert only.provider_ids == resumed.provider_ids
    assert {i["instance_type"] for i in running(state_dir, MT)} == {"p5e.48xlarge"}
    assert len(running(state_dir, MT)) == 3


def test_housekeeping_never_touches_a_worker_still_booting(state_dir: Path) -> None:
    booting = LocalProvider(settings={}, state_dir=state_dir, environ={})
    done: list[Observed] = []
    thread = threading.Thread(target=lambda: done.append(booting.create(workers(2, "sleep 0.5"))))
    thread.start()
    while len(list((state_dir / "workers").glob("*/setup.pid"))) < 2:
        time.sleep(0.02)
    other = LocalProvider(settings={}, state_dir=state_dir, environ={})
    assert other.fleet.sweep() is None  # a launch is in flight: housekeeping waits its turn
    assert len(list((state_dir / "workers").iterdir())) == 2
    thread.join()
    assert done and done[0].attributes["running"] == 2
    assert other.fleet.sweep() == []  # nothing stray once it is recorded


def test_forget_and_import_of_what_is_not_there(provider: LocalProvider) -> None:
    ids = provider.create(machine(1, 1)).provider_ids
    provider.delete(MT, "machine_type", ids, lineage=LINEAGE)
    with pytest.raises(ProviderError) as gone:
        provider.forget(MT, "machine_type", ids)
    assert gone.value.kind is ErrorKind.NOT_FOUND
    for odd in ("", "ig-does-not-exist", "obj-\u00e9\u200b", "'; DROP TABLE groups; --"):
        with pytest.raises(ProviderError) as missing:
            provider.import_resource(MT, "machine_type", odd, {TAG_LINEAGE: LINEAGE})
        assert missing.value.kind is ErrorKind.NOT_FOUND
    assert provider.list(LINEAGE) == []
