"""What a managed resource asks of any provider's instances: instance type, market, bounds and
the launch-template fields. Shared by every provider, and by drift, which reads a recorded
resource through the same function to know what the cloud should report back."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from providers.catalog import CATALOG, MARKETS, choose_instance_type, unknown_type
from providers.protocol import ErrorKind, ProviderError, ResourceSpec

GROUP_TYPES = ("machine_type", "worker_pool")
CONTROL_PLANE_TYPES = ("cluster", "compute_config", "resource_pool", "subject_policy")
TEMPLATE_FIELDS = ("advanced_instance_config", "zones", "user_data")


@dataclass(frozen=True)
class Shape:
    resource_type: str
    instance_type: str
    market: str
    min_size: int
    max_size: int
    desired: int  # what create launches; update and replace clamp the current count instead
    group_config: dict[str, Any]
    template_config: dict[str, Any] | None  # None: a worker pool has no launch template
    setup: str | None = None
    env: dict[str, str] = field(default_factory=dict)  # envs and secrets, never stored
    sensitive: tuple[str, ...] = ()  # clear values of sensitive fields: redacted from any log

    @property
    def prefix(self) -> str:
        return "ig" if self.template_config is not None else "wp"


@functools.cache
def sensitive_template_fields() -> tuple[str, ...]:
    """Launch-template fields the schema marks sensitive (`user_data`): never stored in clear."""
    from schemas import MachineType  # the models are heavy: only when a provider needs them
    from schemas.rules import sensitive_paths

    paths = sensitive_paths(MachineType)
    return tuple(p[1] for p in paths if len(p) == 2 and p[0] == "launch_templates")


def sensitive_values(model_name: str, attributes: Mapping[str, Any]) -> tuple[str, ...]:
    """The clear values of every field the schema marks sensitive (worker `secrets`, ...):
    what logs shown to a user must not contain."""
    import schemas
    from schemas.rules import sensitive_paths

    found = set()
    for path in sensitive_paths(getattr(schemas, model_name)):
        found |= {v for v in _leaves(attributes, path) if v}
    return tuple(sorted(found, key=len, reverse=True))  # longest first: no partial leftovers


def _leaves(data: Any, path: tuple[str, ...]) -> Iterator[str]:
    if isinstance(data, list):
        for item in data:
            yield from _leaves(item, path)
    elif not path:
        if isinstance(data, Mapping):
            for value in data.values():
                yield from _leaves(value, path)
        elif data is not None:
            yield str(data)
    elif isinstance(data, Mapping) and path[0] in data:
        yield from _leaves(data[path[0]], path[1:])


def _int(attributes: Mapping[str, Any], key: str, default: int = 0) -> int:
    value = attributes.get(key)
    return default if value is None else int(value)


def _bad(spec: ResourceSpec, message: str) -> ProviderError:
    return ProviderError(ErrorKind.PERMANENT, message, address=spec.address)


def shape_of(spec: ResourceSpec, *, catalog_only: bool = True) -> Shape:
    """`catalog_only`: the local provider simulates only catalog types; a cloud takes any name
    and lets the cloud refuse it."""
    if spec.resource_type == "machine_type":
        return _machine_type(spec, catalog_only)
    if spec.resource_type == "worker_pool":
        return _worker_pool(spec)
    raise _bad(spec, f"a provider has no instances for {spec.resource_type!r}")


def _machine_type(spec: ResourceSpec, catalog_only: bool) -> Shape:
    attributes = spec.attributes
    templates = attributes.get("launch_templates") or []
    if not templates:
        raise _bad(spec, "a machine type needs a launch template")
    template = templates[0]
    instance_type = str(template.get("instance_type"))
    if catalog_only and instance_type not in CATALOG:
        raise unknown_type(instance_type, spec.address)
    market = str(template.get("market_type") or "ON_DEMAND")
    if market not in MARKETS:
        raise _bad(spec, f"unknown market type {market!r}; use one of {', '.join(MARKETS)}")
    low, high = _int(attributes, "min_size"), _int(attributes, "max_size")
    if low < 0 or high < low:
        raise _bad(spec, f"invalid bounds [{low}, {high}]")
    return Shape(
        resource_type="machine_type",
        instance_type=instance_type,
        market=market,
        min_size=low,
        max_size=high,
        desired=low,
        group_config={
            k: v for k, v in attributes.items() if k not in ("launch_templates", "provider")
        },
        template_config={k: template.get(k) for k in TEMPLATE_FIELDS},
    )


def _worker_pool(spec: ResourceSpec) -> Shape:
    attributes = spec.attributes
    resources = attributes.get("resources") or {}
    instance_type = choose_instance_type(resources, spec.address)
    market = "SPOT" if resources.get("use_spot") else "ON_DEMAND"
    pool = attributes.get("pool") or {}
    if pool.get("workers") is not None:
        low = high = desired = int(pool["workers"])
    else:
        low = desired = _int(pool, "min_workers")
        high = max(low, _int(pool, "max_workers", low))
    secrets = {str(k): str(v) for k, v in (attributes.get("secrets") or {}).items()}
    envs = {str(k): str(v) for k, v in (attributes.get("envs") or {}).items()}
    config = {
        "instance_type": instance_type.name,
        "market_type": market,
        "setup": attributes.get("setup"),
        "workdir": attributes.get("workdir"),
        "file_mounts": attributes.get("file_mounts") or {},
        "envs": envs,
        "secret_names": sorted(secrets),
        "resources": resources,
    }
    return Shape(
        resource_type="worker_pool",
        instance_type=instance_type.name,
        market=market,
        min_size=low,
        max_size=high,
        desired=desired,
        group_config=config,
        template_config=None,
        setup=attributes.get("setup"),
        env={**envs, **secrets},
        sensitive=sensitive_values("WorkerPool", attributes),
    )
