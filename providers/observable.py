"""What a provider reports of a managed resource, and what state says it should report.

Every provider fills `Observed.attributes` with this vocabulary, whatever its cloud calls things,
so drift compares reality with state without knowing which cloud answered.

An instance group (`machine_type`, `worker_pool`):

    instance_type, market_type   str        the template's (market: ON_DEMAND or SPOT)
    advanced_instance_config     dict       the template data poolform passed through
    zones                        list[str]
    user_data                    str|None   as the cloud returns it; drift compares it by salted
                                            hash and never shows it (the local cloud keeps only
                                            a hash, and reports the key only once it was changed
                                            by hand: providers/local/sealed.py)
    min_size, max_size           int        the group's bounds (owned by the configuration)
    desired, running             int        what runs now (owned by the scheduler)
    template_version             int|str    informational
    heals                        bool       whether the group brings `running` back to
                                            `desired` by itself (absent: it does, as Auto
                                            Scaling groups and managed instance groups do);
                                            a group that does not is restored by `apply`

A worker pool adds what a provider can read back of `setup`, `workdir`, `file_mounts`, `envs`
and `secret_names`. A control-plane resource (compute_config, resource_pool, subject_policy)
reports its attributes as stored. A provider leaves out a key it cannot read back, and drift
compares only the keys reported: silence is not drift.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from providers.protocol import ResourceSpec
from providers.shapes import CONTROL_PLANE_TYPES, shape_of

CONFIGURATION = "configuration"
SCHEDULER = "scheduler"

# What runs now: the scheduler moves these inside the bounds, and that is not drift.
SCHEDULER_KEYS = frozenset({"desired", "running", "idle"})
INFORMATIONAL_KEYS = frozenset({"template_version", "heals"})
BOUND_KEYS = frozenset({"min_size", "max_size"})

Path = tuple[str | int, ...]

_TEMPLATE_KEYS = ("instance_type", "market_type", "advanced_instance_config", "zones", "user_data")
_WORKER_KEYS = ("setup", "workdir", "file_mounts", "envs", "secret_names")


@dataclass(frozen=True)
class Expected:
    """What a recorded resource should look like to its provider.

    `paths` maps a key to where it lives in the recorded attributes, so accepting reality
    (`apply --refresh-only`) and planning the fix can write an observed value back; a key
    without a path (a worker pool's chosen instance type) can only be restored by replacing."""

    values: Mapping[str, Any]
    paths: Mapping[str, Path]


def expected_observation(resource_type: str, attributes: Mapping[str, Any]) -> Expected:
    if resource_type in CONTROL_PLANE_TYPES:
        return Expected(dict(attributes), {key: (key,) for key in attributes})
    spec = ResourceSpec("", resource_type, attributes, lineage="", token="")
    shape = shape_of(spec, catalog_only=False)
    values: dict[str, Any] = {
        "instance_type": shape.instance_type,
        "market_type": shape.market,
        "min_size": shape.min_size,
        "max_size": shape.max_size,
    }
    paths: dict[str, Path] = {}
    if resource_type == "machine_type":
        template = shape.template_config or {}
        values["advanced_instance_config"] = template.get("advanced_instance_config") or {}
        values["zones"] = template.get("zones") or []
        values["user_data"] = template.get("user_data")
        paths = {key: ("launch_templates", 0, key) for key in _TEMPLATE_KEYS}
        paths.update({key: (key,) for key in BOUND_KEYS})
    else:
        config = shape.group_config
        values.update({key: config.get(key) for key in _WORKER_KEYS})
        paths = {key: (key,) for key in ("setup", "workdir", "file_mounts", "envs")}
    return Expected(values, paths)


def owner_of(key: str) -> str:
    return SCHEDULER if key in SCHEDULER_KEYS else CONFIGURATION
