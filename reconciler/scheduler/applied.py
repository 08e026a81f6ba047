"""The applied configuration, read from recorded state (never from the YAML on disk).

State records what apply made: `resource_pool.*`, `subject_policy.*`, `worker_pool.*`,
`machine_pool.*.machine_type.*` and `cluster.*` (the scheduling defaults). A record that cannot
be read as what it claims to be is skipped, so one damaged record never stops the scheduler.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from providers.catalog import CATALOG, choose_instance_type
from providers.protocol import ProviderError
from reconciler.scheduler.amounts import SCALE, WORKER, units
from reconciler.scheduler.model import AppliedConfig, Policy, Pool, Worker, WorkerShape
from state import ResourceRecord, StateSnapshot

IMPLICIT = "/*"  # suffix of a pool's implicit policy; no SubjectPolicy name contains '/'


def _amounts(value: Any) -> dict[str, int]:
    if not isinstance(value, Mapping):
        return {}
    return {
        str(k): units(v)
        for k, v in value.items()
        if isinstance(v, int | float) and not isinstance(v, bool) and v >= 0
    }


def accelerator_names(spec: Any) -> tuple[str, ...]:
    """GPU models named by an accelerator spec (`H100:1`, a list, or {H100: 1})."""
    if spec is None:
        return ()
    items: Iterable[Any] = (
        spec.keys() if isinstance(spec, Mapping) else (spec if isinstance(spec, list) else [spec])
    )
    return tuple(sorted({str(item).split(":", 1)[0].upper() for item in items}))


def _machine_pools(records: Sequence[ResourceRecord]) -> list[Pool]:
    totals: dict[str, dict[str, int]] = {}
    models: dict[str, set[str]] = {}
    machines: dict[str, set[tuple[str, bool]]] = {}
    for record in records:
        parts = record.address.split(".")
        if len(parts) != 4:
            continue
        pool = parts[1]
        capacity = totals.setdefault(pool, {"gpu": 0, "cpu": 0, "memory": 0})
        models.setdefault(pool, set())
        templates = record.attributes.get("launch_templates") or [{}]
        for template in templates:  # what a job's instance_type and use_spot are matched with
            named = template.get("instance_type")
            if isinstance(named, str) and named:
                spot = template.get("market_type") == "SPOT"
                machines.setdefault(pool, set()).add((named, spot))
        kind = CATALOG.get(str(templates[0].get("instance_type")))
        size = record.attributes.get("max_size")
        if kind is None or not isinstance(size, int):
            continue
        capacity["gpu"] += size * kind.gpus * SCALE
        capacity["cpu"] += size * kind.vcpus * SCALE
        capacity["memory"] += size * kind.memory_gib * 2**30 * SCALE
        if kind.gpu_type:
            models[pool].add(kind.gpu_type.upper())
    return [
        Pool(
            name,
            "machine",
            capacity,
            (),
            gpu_types=tuple(sorted(models[name])),
            machines=tuple(sorted(machines.get(name, ()))),
        )
        for name, capacity in totals.items()
    ]


def _worker_shape(resources: Mapping[str, Any], address: str) -> WorkerShape:
    names = accelerator_names(resources.get("accelerators"))
    spot = bool(resources.get("use_spot"))
    try:
        kind = choose_instance_type(resources, address)
    except ProviderError:
        from schemas.accelerators import accelerator_count, normalise_accelerators

        try:
            count = accelerator_count(normalise_accelerators(resources.get("accelerators")))
        except ValueError:
            count = 0
        named = resources.get("instance_type")  # a type the catalog does not know is still its
        named = named if isinstance(named, str) and named else None
        return WorkerShape(count * SCALE, names, None, None, named, spot)
    gpus = kind.gpus
    if resources.get("accelerators") is not None and not resources.get("instance_type"):
        from schemas.accelerators import accelerator_count, normalise_accelerators

        gpus = accelerator_count(normalise_accelerators(resources.get("accelerators")))
    models = names or ((kind.gpu_type.upper(),) if kind.gpu_type else ())
    return WorkerShape(
        gpus * SCALE, models, kind.vcpus * SCALE, kind.memory_gib * 2**30 * SCALE, kind.name, spot
    )


def declared_workers(pool: Mapping[str, Any]) -> int:
    for key in ("workers", "max_workers", "min_workers"):
        value = pool.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0


def _worker_pool(record: ResourceRecord, ready: Sequence[tuple[str, str | None]] | None) -> Pool:
    name = record.address.split(".", 1)[1]
    attributes = record.attributes
    resources = attributes.get("resources") or {}
    declared = declared_workers(attributes.get("pool") or {})
    if ready is None:  # a cloud this machine cannot reach: workers by name only
        ready = [(f"{name}-{i}", None) for i in range(declared)]
    workers = tuple(Worker(wid, directory) for wid, directory in ready)
    return Pool(
        name,
        "worker",
        {WORKER: len(workers) * SCALE},
        (),
        worker_shape=_worker_shape(resources, record.address),
        declared_workers=declared,
        workers=workers,
    )


def applied_config(
    state: StateSnapshot,
    workers: Mapping[str, Sequence[tuple[str, str | None]]] | None = None,
) -> AppliedConfig:
    """`workers`: ready workers of each worker pool by pool name, where they can be listed."""
    pools: dict[str, Pool] = {}
    policies: dict[str, Policy] = {}
    machines: list[ResourceRecord] = []
    defaults: dict[str, str | None] = {}
    for record in state:
        try:
            _read(record, pools, policies, machines, defaults, workers)
        except (ValueError, TypeError, AttributeError, KeyError, IndexError):
            continue  # not what it claims to be: skipped (drift and plan report such records)
    for pool in _machine_pools(machines):
        pools.setdefault(pool.name, pool)
    return _bind(state.serial, pools, policies, defaults)


def _read(
    record: ResourceRecord,
    pools: dict[str, Pool],
    policies: dict[str, Policy],
    machines: list[ResourceRecord],
    defaults: dict[str, str | None],
    workers: Mapping[str, Sequence[tuple[str, str | None]]] | None,
) -> None:
    kind, attributes = record.resource_type, record.attributes
    name = record.address.split(".", 1)[-1]
    if kind == "resource_pool":
        parent = attributes.get("parent")
        parent = parent if isinstance(parent, str) and parent else None
        pools[name] = Pool(
            name, "resource", _amounts(attributes.get("capacity")), (), parent=parent
        )
    elif kind == "worker_pool":
        pools[name] = _worker_pool(record, (workers or {}).get(name))
    elif kind == "machine_type":
        machines.append(record)
    elif kind == "subject_policy" and isinstance(attributes.get("pool"), str):
        limit = attributes.get("limit")
        policies[name] = Policy(
            name=name,
            subject=str(attributes.get("subject") or "") or None,
            pool=attributes["pool"],
            priority=int(attributes.get("priority") or 0),
            reserved=_amounts(attributes.get("reserved")),
            limit=None if limit is None else _amounts(limit),
            may_preempt=attributes.get("preemption") != "Never",
        )
    elif kind == "cluster":
        for key in ("default_compute_pool", "default_aux_pool"):
            value = attributes.get(key)
            defaults[key] = value if isinstance(value, str) else None


def _parents(pools: Mapping[str, Pool]) -> dict[str, str]:
    """Each resource pool's parent where it is an applied resource pool; a link that would
    close a cycle (validate refuses those; a damaged state might still hold one) is dropped."""
    kept: dict[str, str] = {}
    for name in sorted(pools):
        parent = pools[name].parent
        if pools[name].kind != "resource" or parent is None or parent not in pools:
            continue
        if pools[parent].kind != "resource":
            continue
        seen: set[str] = {name}
        step: str | None = parent
        while step is not None and step not in seen:
            seen.add(step)
            step = kept.get(step)
        if step is None:
            kept[name] = parent
    return kept


def _bind(
    serial: int,
    pools: dict[str, Pool],
    policies: dict[str, Policy],
    defaults: Mapping[str, str | None],
) -> AppliedConfig:
    """Attach policies to their pools; a pool without one gets an implicit policy that
    reserves all of it (no borrowing to reclaim, priority decides)."""
    bound: dict[str, list[str]] = {}
    kept: dict[str, Policy] = {}
    for policy in sorted(policies.values(), key=lambda p: p.name):
        pool = pools.get(policy.pool)
        if pool is None or pool.kind != "resource":
            continue
        kept[policy.name] = policy
        bound.setdefault(policy.pool, []).append(policy.name)
    final: dict[str, Pool] = {}
    parents = _parents(pools)
    for name in sorted(pools):
        pool = pools[name]
        names = bound.get(name)
        if not names:
            implicit = Policy(
                name + IMPLICIT, None, name, 0, dict(pool.capacity), None, implicit=True
            )
            kept[implicit.name] = implicit
            names = [implicit.name]
        final[name] = Pool(
            pool.name,
            pool.kind,
            pool.capacity,
            tuple(names),
            pool.gpu_types,
            pool.worker_shape,
            pool.declared_workers,
            pool.workers,
            parents.get(name),
            pool.machines,
        )
    return AppliedConfig(
        serial,
        final,
        kept,
        defaults.get("default_compute_pool"),
        defaults.get("default_aux_pool"),
    )
