"""Expansion: each declared object becomes the managed resources a provider realises.

A MachinePool becomes one resource per machine type (launch template + instance group), so a
change to one machine type touches only that machine type. Addresses are stable and readable:
`machine_pool.demo.machine_type.reserved-a100`, `compute_config.gpu-workers`, ...

Pure: a sensitive value written as `${env:NAME}` is looked up in the `environment` mapping the
caller passes in (the use case reads the process environment once, at the edge, for the names
`environment_names` finds); nothing here reads os.environ.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import re
import typing
from collections.abc import Iterator, Mapping
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
from schemas.quantities import WrittenFloat, WrittenInt, parse_duration, parse_quantity
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
    written: Mapping[str, str] = dataclasses.field(default_factory=dict)  # path -> `256Gi`


def resolve_secret(value: str, environment: Mapping[str, str]) -> str:
    """A sensitive value as written, or its environment value for `${env:NAME}`."""
    match = _ENV_REF.match(value)
    if not match:
        return value
    name = match.group(1)
    if name not in environment:
        raise PoolformError(
            f"environment variable {name} is not set (referenced as ${{env:{name}}})"
        )
    return environment[name]


def hash_secret(value: str, salt: str) -> str:
    """What state and plans keep of a sensitive value: enough to see that it changed."""
    digest = hashlib.sha256(f"{salt}\0{value}".encode()).hexdigest()
    return f"{SENSITIVE_PREFIX}{digest}"


@dataclass(frozen=True)
class _Sealing:
    """How sensitive values are sealed: hashed with `salt`, or revealed for a provider call."""

    salt: str
    environment: Mapping[str, str]
    reveal: bool

    def __call__(self, value: Any) -> str:
        clear = resolve_secret(str(value), self.environment)
        return clear if self.reveal else hash_secret(clear, self.salt)


def _mask(data: Any, path: tuple[str, ...], seal: _Sealing) -> Any:
    """Replace the value at a field path (lists traversed) with its salted hash, or with the
    resolved clear value when revealing (for the provider call only, never stored)."""
    if not path:
        if data is None or data == {} or data == []:
            return data
        if isinstance(data, dict):
            return {k: seal(v) for k, v in data.items()}
        return seal(data)
    if isinstance(data, list):
        return [_mask(item, path, seal) for item in data]
    if isinstance(data, dict) and path[0] in data:
        return {**data, path[0]: _mask(data[path[0]], path[1:], seal)}
    return data


def masked_attributes(
    model: Strict,
    salt: str,
    exclude: set[str] | None = None,
    *,
    environment: Mapping[str, str],
    reveal: bool = False,
) -> dict[str, Any]:
    data = model.model_dump(mode="json", exclude={"kind", "name", *(exclude or set())})
    seal = _Sealing(salt, environment, reveal)
    for path in sensitive_paths(type(model)):
        data = _mask(data, path, seal)
    return data


@functools.cache
def _fields_with_written(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields of `model` that can hold a quantity or a duration, at any depth: the only
    ones worth walking (a plan of 10,000 resources walks each once)."""
    return tuple(
        name
        for name, info in model.model_fields.items()
        if _may_hold_written(info.annotation, info.metadata)
    )


def _may_hold_written(annotation: Any, metadata: list[Any]) -> bool:
    if any(getattr(m, "func", None) in (parse_quantity, parse_duration) for m in metadata):
        return True
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return bool(_fields_with_written(annotation))
    return any(
        _may_hold_written(arg, list(getattr(arg, "__metadata__", ())))
        for arg in typing.get_args(annotation)
    )


def written_forms(model: BaseModel) -> dict[str, str]:
    """{attribute path: text} of every quantity or duration the configuration wrote as text
    (schemas/quantities.py keeps it on the number), in the paths of `masked_attributes`."""
    found: dict[str, str] = {}
    _model_forms(model, "", found)
    return found


# The walk builds each path as text step by step (as `dotted` writes it) and visits only the
# fields that can hold a quantity or a duration: a plan of 10,000 resources walks each once.


def _model_forms(model: BaseModel, path: str, found: dict[str, str]) -> None:
    for name in _fields_with_written(type(model)):
        _item_forms(getattr(model, name), name, path, found)


def _item_forms(value: Any, step: str | int, path: str, found: dict[str, str]) -> None:
    """`value`, at `step` below `path`: its written form, or those inside it. Plain values
    (most of them) return at once, before any path is built."""
    kind = type(value)
    if kind is WrittenInt or kind is WrittenFloat:
        found[_step(path, step)] = value.written
    elif kind is dict:
        inner = _step(path, step)
        for key, item in value.items():
            _item_forms(item, key, inner, found)
    elif kind is list or kind is tuple:
        inner = _step(path, step)
        for index, item in enumerate(value):
            _item_forms(item, index, inner, found)
    elif isinstance(value, BaseModel):
        _model_forms(value, _step(path, step), found)


def _step(path: str, step: str | int) -> str:
    """`path` one step further, as `dotted` writes a path."""
    if isinstance(step, int):
        return f"{path}[{step}]"
    return f"{path}.{step}" if path else str(step)


def _written(model: BaseModel, exclude: frozenset[str] = frozenset()) -> dict[str, str]:
    found = written_forms(model)
    if not exclude:
        return found
    return {
        path: text
        for path, text in found.items()
        if path.split(".", 1)[0].split("[", 1)[0] not in exclude
    }


def _sensitive_leaves(data: Any, path: tuple[str, ...]) -> Iterator[Any]:
    """The values `_mask` seals at a field path, read from the models themselves."""
    if isinstance(data, BaseModel):
        if not path:
            yield from data.model_dump(mode="json").values()
        elif path[0] in type(data).model_fields:
            yield from _sensitive_leaves(getattr(data, path[0]), path[1:])
        return
    if not path:
        if isinstance(data, dict):
            yield from data.values()
        elif data is not None:
            yield data
        return
    if isinstance(data, list | tuple):
        for item in data:
            yield from _sensitive_leaves(item, path)
    elif isinstance(data, dict) and path[0] in data:
        yield from _sensitive_leaves(data[path[0]], path[1:])


def _expanded_models(configuration: Configuration) -> Iterator[BaseModel]:
    for pool in configuration.of_kind(MachinePool):
        yield from pool.machine_types
    for kind in (ResourcePool, SubjectPolicy, ComputeConfig, WorkerPool):
        yield from configuration.of_kind(kind)


def environment_names(configuration: Configuration) -> frozenset[str]:
    """Every NAME a sensitive value refers to as `${env:NAME}`: what the caller must look up."""
    names: set[str] = set()
    for model in _expanded_models(configuration):
        for path in sensitive_paths(type(model)):
            for value in _sensitive_leaves(model, path):
                match = _ENV_REF.match(str(value))
                if match:
                    names.add(match.group(1))
    return frozenset(names)


def _machine_type(
    pool: MachinePool, machine: MachineType, provider: str, seal: _Sealing, source: str
) -> DesiredResource:
    attributes = {
        "provider": provider,
        **masked_attributes(
            machine,
            seal.salt,
            exclude={"machine_type"},
            environment=seal.environment,
            reveal=seal.reveal,
        ),
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
        source=source,
        # A machine type's own model holds its written values.
        written=_written(machine, frozenset({"machine_type"})),
    )


def expand(
    configuration: Configuration,
    salt: str,
    *,
    environment: Mapping[str, str],
    reveal: bool = False,
) -> dict[str, DesiredResource]:
    """Every managed resource the configuration declares, by address. Sensitive values are
    salted hashes, or with `reveal` their clear values (for provider calls, never stored);
    `${env:NAME}` values come from `environment`."""
    provider = configuration.cluster.provider
    resources: list[DesiredResource] = []
    seal = _Sealing(salt, environment, reveal)

    def masked(model: Strict) -> dict[str, Any]:
        return masked_attributes(model, salt, environment=environment, reveal=reveal)

    def source(model: Document) -> str:
        return configuration.ref_of(model).file

    def declared(
        model: Document,
        resource_type: str,
        attributes: dict[str, Any],
        dependencies: tuple[str, ...] = (),
        **details: Any,
    ) -> DesiredResource:
        """The resource `resource_type.name` that one document declares, built whole."""
        return DesiredResource(
            f"{resource_type}.{model.name}",
            resource_type,
            type(model),
            attributes,
            dependencies,
            source=source(model),
            written=_written(model),
            **details,
        )

    pools = {p.name: p for p in configuration.of_kind(MachinePool)}
    for pool in pools.values():
        for machine in pool.machine_types:
            provider_of = pool.provider or provider
            resources.append(_machine_type(pool, machine, provider_of, seal, source(pool)))
    for rp in configuration.of_kind(ResourcePool):
        deps = (f"resource_pool.{rp.parent}",) if rp.parent else ()
        resources.append(declared(rp, "resource_pool", masked(rp), deps))
    for policy in configuration.of_kind(SubjectPolicy):
        resources.append(
            declared(
                policy,
                "subject_policy",
                masked(policy),
                (f"resource_pool.{policy.pool}",),
            )
        )
    for cc in configuration.of_kind(ComputeConfig):
        uses = sorted(
            {
                f"machine_pool.{g.machine_pool}.machine_type.{g.instance_type}"
                for g in cc.worker_nodes
                if g.machine_pool in pools
            }
        )
        attributes = {"provider": provider, **masked(cc)}
        resources.append(declared(cc, "compute_config", attributes, tuple(uses)))
    for wp in configuration.of_kind(WorkerPool):
        resources.append(
            declared(
                wp,
                "worker_pool",
                {"provider": provider, **masked(wp)},
                always_replace_reason=wp.always_replace_reason(),
                rolling_instances=wp.pool.target,
                max_surge=wp.max_surge,
                max_unavailable=wp.max_unavailable,
            )
        )
    cluster = configuration.find(Cluster, configuration.cluster.name)
    if cluster is not None and (cluster.default_compute_pool or cluster.default_aux_pool):
        # Only the scheduling defaults: the scheduler reads what was applied, not the YAML.
        defaults = {
            "default_compute_pool": cluster.default_compute_pool,
            "default_aux_pool": cluster.default_aux_pool,
        }
        resources.append(declared(cluster, "cluster", defaults))
    return {r.address: r for r in sorted(resources, key=lambda r: r.address)}
