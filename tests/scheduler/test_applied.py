"""Reading what apply recorded, and what a job file asks for."""

from __future__ import annotations

from pathlib import Path

import pytest

import reconciler.scheduler.context as context_module
from reconciler.scheduler.amounts import SCALE
from reconciler.scheduler.applied import applied_config
from reconciler.scheduler.context import config_reader
from reconciler.scheduler.jobfile import Overrides, load_job, request_of
from reconciler.scheduler.model import Route
from reconciler.scheduler.reasons import Reason
from reconciler.scheduler.routing import resolve
from state import ResourceRecord, StateSnapshot
from tests.scheduler.builders import LINEAGE, config, request, state

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_machine_pool_holds_what_its_machine_types_could_reach() -> None:
    cfg = config(machine_pools={"gpus": {"v100": ("p3dn.24xlarge", 4), "a10": ("g5.xlarge", 2)}})
    pool = cfg.pools["gpus"]
    assert pool.kind == "machine"
    assert pool.capacity["gpu"] == (4 * 8 + 2 * 1) * SCALE
    assert pool.capacity["cpu"] == (4 * 96 + 2 * 4) * SCALE
    assert pool.gpu_types == ("A10G", "V100")
    assert cfg.policies["gpus/*"].implicit  # no policies: one that reserves the whole pool


def test_worker_pools_route_by_gpu_model_and_count() -> None:
    cfg = config(worker_pools={"gpu-pool": 3}, worker_accelerators="H100:1")
    either = request(pool="gpu-pool", gpu=1, accelerators=("H100", "H200"))
    routes = resolve(either, cfg)
    assert isinstance(routes, tuple) and routes[0] == Route("gpu-pool", "gpu-pool/*",
                                                             (("worker", SCALE),), 0)  # fmt: skip
    wrong = resolve(request(pool="gpu-pool", gpu=1, accelerators=("A100",)), cfg)
    assert isinstance(wrong, Reason) and "its GPUs are H100" in wrong.message
    many = resolve(request(pool="gpu-pool", gpu=2), cfg)
    assert isinstance(many, Reason) and "gpu 2 needed, one worker has 1" in many.message


def test_a_damaged_record_is_skipped_not_fatal() -> None:
    good = state(resource_pools={"p": {"gpu": 2}})
    damaged = [
        ResourceRecord("subject_policy.broken", "subject_policy", {"pool": 3}),
        ResourceRecord("subject_policy.worse", "subject_policy", {"pool": "p", "priority": "hi"}),
        ResourceRecord("worker_pool.w", "worker_pool", {"resources": [], "pool": None}),
        ResourceRecord("resource_pool.odd", "resource_pool", {"capacity": "lots"}),
        ResourceRecord("machine_pool.m.machine_type.x", "machine_type", {"launch_templates": [{}]}),
    ]
    cfg = applied_config(StateSnapshot.from_records(LINEAGE, 1, [*good, *damaged]))
    assert "broken" not in cfg.policies and "worse" not in cfg.policies
    assert cfg.pools["odd"].capacity == {}
    assert cfg.pools["p"].capacity == {"gpu": 2 * SCALE}


def test_skypilot_job_files_read_as_written() -> None:
    job = load_job(EXAMPLES / "skypilot" / "jobs" / "batch-job.yaml")
    asked = request_of(job, Overrides(pool="gpu-pool", num_jobs=10))
    assert asked.pool == "gpu-pool"
    assert asked.resources == (("gpu", SCALE),)
    assert asked.accelerators == ("H100", "H200")


def test_at_least_sizes_and_overrides(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(
        "kind: Job\nname: j\nsubject: team\npriority: 5\nresources:\n"
        "  cpus: 4+\n  memory: 32+\n  custom:\n    license: 2\nrun: echo\n"
    )
    asked = request_of(load_job(path), Overrides(subject="other", priority=9, preemptible=False))
    assert dict(asked.resources) == {
        "cpu": 4 * SCALE,
        "memory": 32 * 10**9 * SCALE,
        "license": 2 * SCALE,
    }
    assert (asked.subject, asked.priority, asked.preemptible) == ("other", 9, False)


def test_the_loop_keeps_the_configuration_while_the_state_stands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the configuration worked out (every request's routes) is kept from cycle to cycle
    while lineage and serial stand; a write of the state (its serial moves) or another lineage
    gives a new one, and so does a cache grown past its bound."""
    current: list[StateSnapshot | None] = [state(resource_pools={"p": {"gpu": 2}})]
    read = config_reader(lambda: current[0], tmp_path)
    first = read()
    asked = request(pool="p", gpu=1)
    first.resolved[asked] = resolve(asked, first)  # as a cycle leaves it
    assert read() is first and asked in read().resolved
    current[0] = state(resource_pools={"p": {"gpu": 4}}, serial=2)
    second = read()
    assert second is not first and second.pools["p"].capacity == {"gpu": 4 * SCALE}
    current[0] = StateSnapshot.from_records("another-lineage", 2, list(state(serial=2)))
    third = read()
    assert third is not second and third.pools == {}
    monkeypatch.setattr(context_module, "KEPT_REQUESTS", 0)
    third.resolved[asked] = resolve(asked, third)
    assert read() is not third
    current[0] = None
    assert read().pools == {}


def test_a_reused_serial_with_other_resources_gives_a_new_configuration(tmp_path: Path) -> None:
    """An older state copied back by hand and applied to again reuses a serial the loop has
    seen: the resources recorded, not the serial alone, say whether the kept one stands."""
    current = [state(resource_pools={"p": {"gpu": 2}}, serial=5)]
    read = config_reader(lambda: current[0], tmp_path)
    first = read()
    current[0] = state(resource_pools={"p": {"gpu": 2}}, serial=5)  # read again: the same
    assert read() is first
    current[0] = state(resource_pools={"p": {"gpu": 4}}, serial=5)
    assert read().pools["p"].capacity == {"gpu": 4 * SCALE}
