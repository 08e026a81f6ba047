"""Expansion: each declared object becomes the managed resources a provider realises.

A MachinePool becomes one resource per machine type (launch template + instance group), so a
change to one machine type touches only that machine type. Addresses are stable and readable:
`machine_pool.demo.machine_type.reserved-a100`, `compute_config.gpu-workers`, ...
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from reconciler.errors import PoolformError
from reconciler.loading import Configuration
from schemas import (
    Cluster,
    ComputeConfig,
    MachinePool,
    MachineType,
    ResourcePool,
    SubjectPolicy,
    WorkerPool,
)
from schemas.base import Document, Strict
from schemas.rules import sensitive_paths

_ENV_REF = re.compile(r"^\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}$")
SENSITIVE_PREFIX = "sensitive:sha256:"


@dataclass(frozen=True)
class DesiredResource:
    address: str
    resource_type: str
    model: type[BaseModel]  # whose field rules classify changes to `attributes`
    attributes: dict[str, Any]  # sensitive values replaced by salted hashes
    dependencies: tuple[str, ...] = ()
    always_replace_reason: str | None = None
    reserves_capacity: bool = False  # a replace must destroy first: both cannot fit
    rolling_instances: int = 0
    max_surge: int = 1
    max_unavailable: int = 0
    source: str | None = None


def resolve_secret(value: str) -> str:
    """A sensitive value as written, or read from the environment for `${env:NAME}`."""
    match = _ENV_REF.match(value)
    if not match:
        return value
    name = match.group(1)
    if name not in os.environ:
        raise PoolformError(
            f"environment variable {name} is not set (referenced as ${{env:{name}}})"
        )
    return os.environ[name]


def hash_secret(value: str, salt: str) -> str:
    """What state and plans keep of a sensitive value: enough to see that it changed."""
    digest = hashlib.sha256(f"{salt}\0{value}".encode()).hexdigest()
    return f"{SENSITIVE_PREFIX}{digest}"


def _mask(data: Any, path: tuple[str, ...], salt: str, reveal: bool) -> Any:
    """Replace the value at a field path (lists traversed) with its salted hash, or with the
    resolved clear value when `reveal` (for the provider call only, never stored)."""
    if not path:
        if data is None or data == {} or data == []:
            return data
        seal = (
            (lambda v: resolve_secret(str(v)))
            if reveal
            else (lambda v: hash_secret(resolve_secret(str(v)), salt))
        )
        if isinstance(data, dict):
            return {k: seal(v) for k, v in data.items()}
        return seal(data)
    if isinstance(data, list):
        return [_mask(item, path, salt, reveal) for item in data]
    if isinstance(data, dict) and path[0] in data:
        return {**data, path[0]: _mask(data[path[0]], path[1:], salt, reveal)}
    return data


def masked_attributes(
    model: Strict, salt: str, exclude: set[str] | None = None, *, reveal: bool = False
) -> dict[str, Any]:
    data = model.model_dump(mode="json", exclude={"kind", "name", *(exclude or set())})
    for path in sensitive_paths(type(model)):
        data = _mask(data, path, salt, reveal)
    return data


def _machine_type(
    pool: MachinePool, machine: MachineType, provider: str, salt: str, reveal: bool
) -> DesiredResource:
    attributes = {
        "provider": provider,
        **masked_attributes(machine, salt, exclude={"machine_type"}, reveal=reveal),
    }
    attributes["min_size"] = machine.min_size
    attributes["max_size"] = machine.max_size
    return DesiredResource(
        address=f"machine_pool.{pool.name}.machine_type.{machine.machine_type}",
        resource_type="machine_type",
        model=MachineType,
        attributes=attributes,
        reserves_capacity=machine.template.reserves_capacity(),
        rolling_instances=machine.min_size,
        max_surge=machine.max_surge,
        max_unavailable=machine.max_unavailable,
    )


def expand(
    configuration: Configuration, salt: str, *, reveal: bool = False
) -> dict[str, DesiredResource]:
    """Every managed resource the configuration declares, by address. Sensitive values are
    salted hashes, or with `reveal` their clear values (for provider calls, never stored)."""
    provider = configuration.cluster.provider
    resources: list[DesiredResource] = []

    def add(model: Document, resource: DesiredResource) -> None:
        resources.append(dataclasses.replace(resource, source=configuration.ref_of(model).file))

    pools = {p.name: p for p in configuration.of_kind(MachinePool)}
    for pool in pools.values():
        for machine in pool.machine_types:
            add(pool, _machine_type(pool, machine, pool.provider or provider, salt, reveal))
    for rp in configuration.of_kind(ResourcePool):
        deps = (f"resource_pool.{rp.parent}",) if rp.parent else ()
        add(
            rp,
            DesiredResource(
                f"resource_pool.{rp.name}",
                "resource_pool",
                ResourcePool,
                masked_attributes(rp, salt, reveal=reveal),
                deps,
            ),
        )
    for policy in configuration.of_kind(SubjectPolicy):
        add(
            policy,
            DesiredResource(
                f"subject_policy.{policy.name}",
                "subject_policy",
                SubjectPolicy,
                masked_attributes(policy, salt, reveal=reveal),
                (f"resource_pool.{policy.pool}",),
            ),
        )
    for cc in configuration.of_kind(ComputeConfig):
        uses = sorted(
            {
                f"machine_pool.{g.machine_pool}.machine_type.{g.instance_type}"
                for g in cc.worker_nodes
                if g.machine_pool in pools
            }
        )
        add(
            cc,
            DesiredResource(
                f"compute_config.{cc.name}",
                "compute_config",
                ComputeConfig,
                {"provider": provider, **masked_attributes(cc, salt, reveal=reveal)},
                tuple(uses),
            ),
        )
    for wp in configuration.of_kind(WorkerPool):
        add(
            wp,
            DesiredResource(
                f"worker_pool.{wp.name}",
                "worker_pool",
                WorkerPool,
                {"provider": provider, **masked_attributes(wp, salt, reveal=reveal)},
                always_replace_reason=wp.always_replace_reason(),
                rolling_instances=wp.pool.target,
                max_surge=wp.max_surge,
                max_unavailable=wp.max_unavailable,
            ),
        )
    cluster = configuration.find(Cluster, configuration.cluster.name)
    if cluster is not None and (cluster.default_compute_pool or cluster.default_aux_pool):
        # Only the scheduling defaults: the scheduler reads what was applied, not the YAML.
        defaults = {
            "default_compute_pool": cluster.default_compute_pool,
            "default_aux_pool": cluster.default_aux_pool,
        }
        add(cluster, DesiredResource(f"cluster.{cluster.name}", "cluster", Cluster, defaults))
    return {r.address: r for r in sorted(resources, key=lambda r: r.address)}
