"""Capacity: policies that fit their pools, requests some pool could ever hold."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator

from providers.catalog import CATALOG
from reconciler.checks.common import error, pools_of
from reconciler.checks.placement import job_placement
from reconciler.loading.configuration import Configuration, Finding
from schemas import (
    Cluster,
    Job,
    MachinePool,
    ResourcePool,
    SubjectPolicy,
    WorkerPool,
)
from schemas.accelerators import accelerator_count
from schemas.base import Document
from schemas.text import did_you_mean


def policies_fit(config: Configuration) -> Iterator[Finding]:
    pools = {p.name: p for p in config.of_kind(ResourcePool)}
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    last: dict[str, SubjectPolicy] = {}
    for policy in config.of_kind(SubjectPolicy):
        for key, amount in policy.reserved.items():
            limit = (policy.limit or {}).get(key)
            if limit is not None and amount > limit:
                yield error(
                    config,
                    policy,
                    "reserved-over-limit",
                    f"reserved {key} ({amount}) is above its limit ({limit})",
                    "reserved",
                    key,
                )
        pool = pools.get(policy.pool)
        if pool is None:
            continue
        for field in ("reserved", "limit"):
            for key in getattr(policy, field) or {}:
                if key not in pool.capacity:
                    yield error(
                        config,
                        policy,
                        "unknown-resource-key",
                        f"pool `{pool.name}` has no `{key}` capacity",
                        field,
                        key,
                        hint=did_you_mean(key, pool.capacity)
                        or f"keys of `{pool.name}`: {', '.join(sorted(pool.capacity))}",
                    )
        totals[pool.name].update(policy.reserved)
        last[pool.name] = policy
    for name, reserved in sorted(totals.items()):
        pool = pools[name]
        for key, total in sorted(reserved.items()):
            if key in pool.capacity and total > pool.capacity[key]:
                yield error(
                    config,
                    last[name],
                    "reservations-exceed-capacity",
                    f"policies on `{name}` reserve {total} {key} in all, more than its "
                    f"capacity of {pool.capacity[key]}",
                    "reserved",
                    key,
                )


def _pool_gpus(config: Configuration, pool: Document) -> int:
    """The most GPUs one request could ever get from a pool."""
    if isinstance(pool, ResourcePool):
        return int(pool.capacity.get("gpu", 0))
    if isinstance(pool, MachinePool):
        return max(
            (
                CATALOG[m.template.instance_type].gpus
                for m in pool.machine_types
                if m.template.instance_type in CATALOG
            ),
            default=0,
        )
    if isinstance(pool, WorkerPool):
        return accelerator_count(pool.resources.accelerators)
    return 0


def request_shapes(config: Configuration) -> Iterator[Finding]:
    pools = pools_of(config, "pool")
    cluster = config.cluster
    compute_pool = pools.get(cluster.default_compute_pool or "")
    declared = config.find(Cluster, cluster.name) is not None
    if compute_pool is not None and declared and not _pool_gpus(config, compute_pool):
        yield error(
            config,
            cluster,
            "unsatisfiable-request",
            f"default_compute_pool `{cluster.default_compute_pool}` has no GPUs, so jobs "
            "that need GPUs would wait forever",
            "default_compute_pool",
            hint="point it at a pool with GPU machines, or use default_aux_pool for CPU pools",
        )
    for job in config.of_kind(Job):
        named = job.resources.resource_pool
        if job.pool is not None and named is not None and named != job.pool:
            # Routing takes `pool` and drops the other: a job sent to another pool than the
            # one its author read in the file, with its quota and hardware.
            yield error(
                config,
                job,
                "conflicting-pools",
                f"the job names two pools, `{job.pool}` (pool) and `{named}` "
                f"(resources.resource_pool); it would run on `{job.pool}` only",
                "resources",
                "resource_pool",
                hint="name one pool: `pool`, or Determined's `resources.resource_pool`",
            )
        needed = job.gpus_requested()
        name = (
            job.pool
            or job.resources.resource_pool
            or (cluster.default_compute_pool if needed else cluster.default_aux_pool)
        )
        if name in pools and (job.subject is None or job.pool or job.resources.resource_pool):
            yield from job_placement(config, job, pools[name])  # else routed by its subject
        if not needed or name not in pools:
            continue
        has = _pool_gpus(config, pools[name])
        if has < needed:
            path = (
                ("resources", "gpu")
                if job.resources.gpu is not None
                else ("resources", "accelerators")
            )
            yield error(
                config,
                job,
                "unsatisfiable-request",
                f"the job asks for {needed:g} GPU(s) but pool `{name}` can give at most {has}; "
                "it would stay pending forever",
                *path,
            )
