"""Small builders for scheduler tests: applied state as apply records it, and jobs in units."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from reconciler.scheduler.amounts import SCALE, units
from reconciler.scheduler.applied import applied_config
from reconciler.scheduler.model import AppliedConfig, Holding, JobRequest, Queued, Snapshot
from state import ResourceRecord, StateSnapshot

LINEAGE = "00000000-0000-4000-8000-000000000000"


def policy(
    pool: str,
    subject: str,
    *,
    priority: int = 0,
    reserved: Mapping[str, float] | None = None,
    limit: Mapping[str, float] | None = None,
    preemption: str = "LowerPriority",
) -> dict[str, Any]:
    return {
        "subject": subject,
        "pool": pool,
        "priority": priority,
        "reserved": dict(reserved or {}),
        "limit": None if limit is None else dict(limit),
        "preemption": preemption,
    }


def state(
    *,
    resource_pools: Mapping[str, Mapping[str, float]] | None = None,
    policies: Mapping[str, dict[str, Any]] | None = None,
    worker_pools: Mapping[str, int] | None = None,
    worker_accelerators: str | None = None,
    machine_pools: Mapping[str, Mapping[str, tuple[str, int]]] | None = None,
    defaults: Mapping[str, str] | None = None,
    parents: Mapping[str, str] | None = None,
    serial: int = 1,
) -> StateSnapshot:
    """Records as apply writes them. `machine_pools`: pool -> machine type -> (instance type,
    max size)."""
    records: list[ResourceRecord] = []
    for name, capacity in (resource_pools or {}).items():
        parent = (parents or {}).get(name)
        attributes = {"capacity": dict(capacity), "description": None, "parent": parent}
        records.append(ResourceRecord(f"resource_pool.{name}", "resource_pool", attributes))
    for name, attributes in (policies or {}).items():
        records.append(ResourceRecord(f"subject_policy.{name}", "subject_policy", attributes))
    for name, workers in (worker_pools or {}).items():
        attributes = {
            "pool": {"workers": workers, "min_workers": None, "max_workers": None},
            "provider": "aws",  # no local inventory: workers by name
            "resources": {"accelerators": worker_accelerators},
        }
        records.append(ResourceRecord(f"worker_pool.{name}", "worker_pool", attributes))
    for pool, types in (machine_pools or {}).items():
        for machine, (instance_type, size) in types.items():
            attributes = {
                "launch_templates": [{"instance_type": instance_type}],
                "min_size": 0,
                "max_size": size,
            }
            address = f"machine_pool.{pool}.machine_type.{machine}"
            records.append(ResourceRecord(address, "machine_type", attributes))
    if defaults:
        records.append(ResourceRecord("cluster.test", "cluster", dict(defaults)))
    return StateSnapshot.from_records(LINEAGE, serial, records)


def config(**kwargs: Any) -> AppliedConfig:
    return applied_config(state(**kwargs))


def request(
    *,
    pool: str | None = None,
    subject: str | None = None,
    priority: int | None = None,
    preemptible: bool = True,
    accelerators: tuple[str, ...] = (),
    **resources: float,
) -> JobRequest:
    amounts = tuple(sorted((k, units(v)) for k, v in resources.items() if v))
    return JobRequest(pool, subject, amounts, accelerators, priority, preemptible)


def queued(job_id: int, *, at: float | None = None, batch: int = 0, **kwargs: Any) -> Queued:
    claim = kwargs.pop("claim_until", None)
    return Queued(job_id, request(**kwargs), job_id if at is None else at, batch or job_id, claim)


def holding(
    job_id: int,
    pool: str,
    policy_name: str,
    *,
    priority: int = 0,
    preemptible: bool = True,
    at: float = 0.0,
    stopping: bool = False,
    preempted_for: int | None = None,
    worker: str | None = None,
    batch: int = 0,
    **resources: float,
) -> Holding:
    amounts = tuple(sorted((k, units(v)) for k, v in resources.items() if v))
    return Holding(
        job_id, pool, policy_name, amounts, priority, preemptible, at, batch or job_id,
        worker, stopping, preempted_for,
    )  # fmt: skip


def snapshot(
    cfg: AppliedConfig, queue: list[Queued], held: list[Holding] | None = None
) -> Snapshot:
    return Snapshot(cfg, tuple(queue), tuple(held or ()), cycle=1, claim_ttl=60.0)


def gpus(value: int) -> int:
    return value * SCALE
