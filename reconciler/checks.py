"""Rules between documents, checked before any plan. Each check yields findings; none raises.

Every finding names its rule, so a user can look it up and a test can assert it.
"""

from __future__ import annotations

import graphlib
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator

from providers.catalog import CATALOG, cloud_of_instance_type
from reconciler.loading.configuration import Configuration, Finding, suggest
from schemas import (
    POOL_KINDS,
    Cluster,
    ComputeConfig,
    Job,
    MachinePool,
    ResourcePool,
    SubjectPolicy,
    WorkerPool,
)
from schemas.accelerators import accelerator_count
from schemas.base import Document

Check = Callable[[Configuration], Iterator[Finding]]


def _error(
    config: Configuration,
    model: Document,
    rule: str,
    message: str,
    *path: str | int,
    hint: str | None = None,
) -> Finding:
    return Finding("error", rule, message, config.ref_of(model).at(*path), hint)


def _warning(
    config: Configuration,
    model: Document,
    rule: str,
    message: str,
    *path: str | int,
    hint: str | None = None,
) -> Finding:
    return Finding("warning", rule, message, config.ref_of(model).at(*path), hint)


def unique_names(config: Configuration) -> Iterator[Finding]:
    seen: dict[tuple[str, str], Document] = {}
    pool_names: dict[str, Document] = {}
    for doc in config.documents:
        key = (doc.kind, doc.model.name)
        if key in seen:
            first = config.ref_of(seen[key])
            yield Finding(
                "error",
                "duplicate-name",
                f"{doc.kind} `{doc.model.name}` is defined twice (first in {first.file})",
                doc.ref.at("name"),
            )
            continue
        seen[key] = doc.model
        if doc.kind in POOL_KINDS:
            other = pool_names.get(doc.model.name)
            if other is not None:
                yield Finding(
                    "error",
                    "duplicate-pool-name",
                    f"pool name `{doc.model.name}` is used by both a {other.kind} and a "
                    f"{doc.kind}; jobs and defaults refer to pools by name",
                    doc.ref.at("name"),
                )
            pool_names.setdefault(doc.model.name, doc.model)
    clusters = config.of_kind(Cluster)
    for extra in clusters[1:]:
        yield _error(
            config,
            extra,
            "one-cluster",
            f"a configuration has one Cluster; `{clusters[0].name}` is already defined",
            "name",
        )


def _pools(config: Configuration, family: str) -> dict[str, Document]:
    kinds = POOL_KINDS if family == "pool" else (family,)
    return {d.model.name: d.model for d in config.documents if d.kind in kinds}


def references_exist(config: Configuration) -> Iterator[Finding]:
    families: dict[str, dict[str, Document]] = {}
    # A Job names its pool at submit time, against the applied configuration; a Job file
    # validated on its own cannot see the pools, so only declarative documents are checked here.
    for doc in config.documents:
        if not doc.model.declarative:
            continue
        for path, family, name in doc.model.references():
            if family not in families:
                families[family] = _pools(config, family)
            pools = families[family]
            if name in pools or any(name == n for k, n in config.invalid if family in (k, "pool")):
                continue
            what = "pool" if family == "pool" else family
            yield Finding(
                "error",
                "unknown-reference",
                f"{what} `{name}` is not defined",
                doc.ref.at(*path),
                suggest(name, pools)
                or (f"define a {family} named `{name}`" if family != "pool" else None),
            )


def reference_cycles(config: Configuration) -> Iterator[Finding]:
    parents = {p.name: p.parent for p in config.of_kind(ResourcePool) if p.parent}
    sorter = graphlib.TopologicalSorter({child: [parent] for child, parent in parents.items()})
    try:
        sorter.prepare()
    except graphlib.CycleError as exc:
        cycle = exc.args[1]
        pool = config.find(ResourcePool, cycle[0])
        if pool is not None:
            yield _error(
                config,
                pool,
                "reference-cycle",
                "pools borrow from each other in a cycle: " + " -> ".join(cycle),
                "parent",
            )


def compute_configs(config: Configuration) -> Iterator[Finding]:
    pools = {p.name: p for p in config.of_kind(MachinePool)}
    for cc in config.of_kind(ComputeConfig):
        head = cc.head_node
        if head.market_type != "ON_DEMAND":
            yield _error(
                config,
                cc,
                "head-node-on-demand",
                f"the head node must be on-demand, not {head.market_type}",
                "head_node",
                "market_type",
                hint="set market_type: ON_DEMAND",
            )
        if head.flags and head.flags.cloud_deployment and head.flags.cloud_deployment.machine_pool:
            yield _error(
                config,
                cc,
                "head-node-on-demand",
                "the head node cannot come from a machine pool; it must be an on-demand "
                "instance that reaches every pool node",
                "head_node",
                "flags",
                "cloud_deployment",
                "machine_pool",
            )
        seen_groups: set[str] = set()
        for index, group in enumerate(cc.worker_nodes):
            if group.group_name in seen_groups:
                yield _error(
                    config,
                    cc,
                    "duplicate-worker-group",
                    f"two worker groups are named `{group.group_name}`"
                    + ("" if group.name else " (the name defaults to instance_type)"),
                    "worker_nodes",
                    index,
                    "name" if group.name else "instance_type",
                    hint="give each group a distinct `name`",
                )
            seen_groups.add(group.group_name)
            pool = pools.get(group.machine_pool or "")
            if pool is not None and pool.machine_type(group.instance_type) is None:
                yield _error(
                    config,
                    cc,
                    "unknown-reference",
                    f"machine pool `{pool.name}` has no machine type `{group.instance_type}`",
                    "worker_nodes",
                    index,
                    "instance_type",
                    hint=suggest(group.instance_type, [m.machine_type for m in pool.machine_types]),
                )
        groups = {g.group_name for g in cc.worker_nodes}
        for r, ranker in enumerate(cc.flags.instance_ranking_strategy):
            for o, name in enumerate(ranker.ranker_config.group_order):
                if name not in groups:
                    yield _error(
                        config,
                        cc,
                        "unknown-reference",
                        f"group_order names `{name}`, which is not a worker group of `{cc.name}`",
                        "flags",
                        "instance_ranking_strategy",
                        r,
                        "ranker_config",
                        "group_order",
                        o,
                        hint=suggest(name, groups),
                    )


def policies_fit(config: Configuration) -> Iterator[Finding]:
    pools = {p.name: p for p in config.of_kind(ResourcePool)}
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    last: dict[str, SubjectPolicy] = {}
    for policy in config.of_kind(SubjectPolicy):
        for key, amount in policy.reserved.items():
            limit = (policy.limit or {}).get(key)
            if limit is not None and amount > limit:
                yield _error(
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
                    yield _error(
                        config,
                        policy,
                        "unknown-resource-key",
                        f"pool `{pool.name}` has no `{key}` capacity",
                        field,
                        key,
                        hint=suggest(key, pool.capacity)
                        or f"keys of `{pool.name}`: {', '.join(sorted(pool.capacity))}",
                    )
        totals[pool.name].update(policy.reserved)
        last[pool.name] = policy
    for name, reserved in sorted(totals.items()):
        pool = pools[name]
        for key, total in sorted(reserved.items()):
            if key in pool.capacity and total > pool.capacity[key]:
                yield _error(
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
    pools = _pools(config, "pool")
    cluster = config.cluster
    compute_pool = pools.get(cluster.default_compute_pool or "")
    declared = config.find(Cluster, cluster.name) is not None
    if compute_pool is not None and declared and not _pool_gpus(config, compute_pool):
        yield _error(
            config,
            cluster,
            "unsatisfiable-request",
            f"default_compute_pool `{cluster.default_compute_pool}` has no GPUs, so jobs "
            "that need GPUs would wait forever",
            "default_compute_pool",
            hint="point it at a pool with GPU machines, or use default_aux_pool for CPU pools",
        )
    for job in config.of_kind(Job):
        needed = job.gpus_requested()
        name = (
            job.pool
            or job.resources.resource_pool
            or (cluster.default_compute_pool if needed else cluster.default_aux_pool)
        )
        if not needed or name not in pools:
            continue
        has = _pool_gpus(config, pools[name])
        if has < needed:
            path = (
                ("resources", "gpu")
                if job.resources.gpu is not None
                else ("resources", "accelerators")
            )
            yield _error(
                config,
                job,
                "unsatisfiable-request",
                f"the job asks for {needed:g} GPU(s) but pool `{name}` can give at most {has}; "
                "it would stay pending forever",
                *path,
            )


def providers_agree(config: Configuration) -> Iterator[Finding]:
    cluster = config.cluster
    for pool in config.of_kind(MachinePool):
        provider = pool.provider or cluster.provider
        for index, machine in enumerate(pool.machine_types):
            instance = machine.template.instance_type
            cloud = cloud_of_instance_type(instance)
            path = ("machine_types", index, "launch_templates", 0, "instance_type")
            if provider == "local":
                if instance not in CATALOG:
                    yield _error(
                        config,
                        pool,
                        "unknown-instance-type",
                        f"the local provider does not simulate `{instance}`",
                        *path,
                        hint=suggest(instance, CATALOG) or f"known: {', '.join(sorted(CATALOG))}",
                    )
            elif cloud != provider:
                yield _error(
                    config,
                    pool,
                    "provider-mismatch",
                    f"`{instance}` is {'not a known instance type' if cloud is None else f'a {cloud.upper()} instance type'}"
                    f", but pool `{pool.name}` is on {provider}",
                    *path,
                )
    pools = {p.name: p for p in config.of_kind(MachinePool)}
    for cc in config.of_kind(ComputeConfig):
        head_cloud = cloud_of_instance_type(cc.head_node.instance_type)
        for index, group in enumerate(cc.worker_nodes):
            drawn = pools.get(group.machine_pool or "")
            if drawn is None:
                continue
            provider = drawn.provider or cluster.provider
            if provider != "local" and head_cloud not in (None, provider):
                yield _error(
                    config,
                    cc,
                    "provider-mismatch",
                    f"worker group `{group.group_name}` draws from `{drawn.name}` on {provider}, "
                    f"but the head node `{cc.head_node.instance_type}` is a {(head_cloud or '').upper()} instance type",
                    "worker_nodes",
                    index,
                    "flags",
                    "cloud_deployment",
                    "machine_pool",
                )


def risky_but_legal(config: Configuration) -> Iterator[Finding]:
    for pool in config.of_kind(MachinePool):
        for index, machine in enumerate(pool.machine_types):
            known = CATALOG.get(machine.template.instance_type)
            if known and machine.max_size > known.typical_quota:
                yield _warning(
                    config,
                    pool,
                    "above-typical-quota",
                    f"machine type `{machine.machine_type}` may grow to {machine.max_size} "
                    f"{known.name}, above the usual account quota of {known.typical_quota}",
                    "machine_types",
                    index,
                    "partitions",
                    hint="check your cloud quota for this type before apply",
                )
            if machine.template.market_type == "SPOT" and machine.min_size:
                yield _warning(
                    config,
                    pool,
                    "warm-spot",
                    f"machine type `{machine.machine_type}` keeps {machine.min_size} warm spot "
                    "instances, which the cloud may reclaim at any time",
                    "machine_types",
                    index,
                    "partitions",
                )
    for wp in config.of_kind(WorkerPool):
        reason = wp.always_replace_reason()
        if reason:
            yield _warning(
                config,
                wp,
                "always-replace",
                f"every change to `{wp.name}` recreates its workers: {reason.split(',')[0]}",
                "file_mounts" if wp.file_mounts else "workdir",
            )


CHECKS: tuple[Check, ...] = (
    unique_names,
    references_exist,
    reference_cycles,
    compute_configs,
    policies_fit,
    request_shapes,
    providers_agree,
    risky_but_legal,
)


def check_configuration(config: Configuration) -> list[Finding]:
    return [finding for check in CHECKS for finding in check(config)]
