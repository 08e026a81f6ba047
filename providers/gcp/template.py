"""Instance templates: built from a machine type's launch template, and read back from GCE.

A template is immutable in GCE, so a change of instance type, market, advanced config, zones
or user data makes a new template (named with the new idempotency token) and rolls the group
over to it. What poolform sets:

- `machineType`; a boot disk from the `image` setting; one interface on the `network` setting;
- market SPOT -> `scheduling.provisioningModel: SPOT` with `instanceTerminationAction: DELETE`
  (the group recreates a reclaimed VM when capacity returns); ON_DEMAND -> `STANDARD`;
- `user_data` -> the `startup-script` metadata item; a worker pool's `setup` (with its `envs`
  exported first) likewise;
- `labels`: poolform-lineage / poolform-address, which GCE copies onto every instance;
- `advanced_instance_config.instanceProperties` (either spelling) merged over all of that:
  labels and metadata items by key (poolform's own win), scheduling field by field, any other
  field replacing poolform's (reservationAffinity, disks, networkInterfaces, guestAccelerators).

Reading back, `advanced_instance_config` is the template's properties projected onto the shape
of what was passed (its keys, recorded in the description; never its values), so labels and
metadata GCE merged in are not reported as drift, and int64 fields GCE returns as strings come
back as the numbers they were.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from providers.protocol import ErrorKind, ProviderError, ResourceSpec
from providers.shapes import Shape

from .names import describe, labels_for, last_segment, parse_description
from .settings import GcpSettings

STARTUP_SCRIPT = "startup-script"
_PROPERTY_KEYS = ("instanceProperties", "instance_properties")
_BASE_KEYS = frozenset({"machineType", "disks", "networkInterfaces", "labels", "metadata"})
_SETUP_MARK = "# poolform: setup"
MAX_DESCRIPTION = 2048  # characters GCE keeps in a resource's description


def camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def template_body(
    spec: ResourceSpec, shape: Shape, settings: GcpSettings, name: str
) -> dict[str, Any]:
    """The InstanceTemplate as JSON (camelCase), ready for `InstanceTemplate.from_json`."""
    config = shape.template_config or {}
    advanced = dict(config.get("advanced_instance_config") or {})
    extra = sorted(set(advanced) - set(_PROPERTY_KEYS))
    if extra:
        raise ProviderError(
            ErrorKind.PERMANENT,
            f"advanced_instance_config.{extra[0]}: GCP takes only `instanceProperties` here "
            "(the instance template's properties)",
            address=spec.address,
        )
    script = config.get("user_data") if shape.template_config is not None else worker_script(shape)
    spot = shape.market == "SPOT"
    properties: dict[str, Any] = {
        "machineType": shape.instance_type,
        "disks": [
            {"boot": True, "autoDelete": True, "initializeParams": {"sourceImage": settings.image}}
        ],
        "networkInterfaces": [{"network": settings.network}],
        "labels": labels_for(spec.lineage, spec.address),
        "metadata": {"items": [{"key": STARTUP_SCRIPT, "value": script}] if script else []},
        "scheduling": {"provisioningModel": "SPOT" if spot else "STANDARD"},
    }
    if spot:
        properties["scheduling"]["instanceTerminationAction"] = "DELETE"
    passed = next((advanced[k] for k in _PROPERTY_KEYS if k in advanced), None) or {}
    for raw_key, value in passed.items():
        key = camel(raw_key)
        ours: Any = properties.get(key)
        if key == "labels" and isinstance(value, Mapping):
            properties[key] = {**value, **ours}  # poolform's labels are how it finds instances
        elif key == "metadata" and isinstance(value, Mapping):
            items = {i["key"]: i for i in value.get("items", []) if isinstance(i, Mapping)}
            items.update({i["key"]: i for i in ours["items"]})  # user_data is the startup script
            properties[key] = {**value, "items": list(items.values())}
        elif key == "scheduling" and isinstance(value, Mapping):
            merged = {**ours, **value}
            merged["provisioningModel"] = "SPOT" if spot else "STANDARD"  # market_type decides
            properties[key] = merged
        else:
            properties[key] = value
    description = describe(spec.tags(), aic=skeleton(advanced))
    if len(description) > MAX_DESCRIPTION:  # GCE refuses longer: keep the top-level shape only
        coarse = {k: {kk: "whole" for kk in v} if isinstance(v, Mapping) else "whole"
                  for k, v in advanced.items()}  # fmt: skip
        description = describe(spec.tags(), aic=coarse)
    return {"name": name, "description": description, "properties": properties}


def template_attributes(template: Mapping[str, Any]) -> dict[str, Any]:
    """The observable vocabulary of a template (as a camelCase JSON dict from GCE)."""
    properties = template.get("properties") or {}
    scheduling = properties.get("scheduling") or {}
    spot = scheduling.get("provisioningModel") == "SPOT" or bool(scheduling.get("preemptible"))
    items = (properties.get("metadata") or {}).get("items") or []
    script = next((i.get("value") for i in items if i.get("key") == STARTUP_SCRIPT), None)
    description = parse_description(template.get("description"))
    if "aic" in description:
        advanced = project({"instanceProperties": properties}, description["aic"])
    else:  # not made by poolform (swapped in by hand): whatever it sets beyond the basics
        rest = {k: v for k, v in properties.items() if k not in _BASE_KEYS and v not in ({}, [])}
        advanced = {"instanceProperties": rest}
    return {
        "instance_type": last_segment(str(properties.get("machineType", ""))),
        "market_type": "SPOT" if spot else "ON_DEMAND",
        "advanced_instance_config": advanced,
        "user_data": script,
        "template_version": template.get("name"),
    }


def skeleton(value: Any) -> Any:
    """The shape of a value: keys and list lengths, leaves as type names. A `key` field keeps
    its value (metadata items are matched by it); no other value is kept."""
    if isinstance(value, Mapping):
        return {
            k: (v if k == "key" and isinstance(v, str) else skeleton(v)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [skeleton(v) for v in value]
    return type(value).__name__


def project(cloud: Any, shape: Any) -> Any:
    """`cloud` cut down to `shape` (a skeleton), in the spelling of the shape's keys."""
    if isinstance(shape, dict):
        if not isinstance(cloud, Mapping):
            return cloud
        out = {}
        for key, sub in shape.items():
            found = key if key in cloud else camel(key)
            if found in cloud:
                out[key] = project(cloud[found], sub)
        return out
    if isinstance(shape, list):
        if not isinstance(cloud, list):
            return cloud
        if shape and all(isinstance(s, dict) and isinstance(s.get("key"), str) for s in shape):
            by_key = {c.get("key"): c for c in cloud if isinstance(c, Mapping)}
            return [project(by_key[s["key"]], s) for s in shape if s["key"] in by_key]
        if len(cloud) != len(shape):
            return cloud
        return [project(c, s) for c, s in zip(cloud, shape, strict=True)]
    if shape == "int" and isinstance(cloud, str) and re.fullmatch(r"-?\d+", cloud):
        return int(cloud)  # int64 fields travel as strings in the JSON mapping
    if shape == "float" and isinstance(cloud, str | int):
        return float(cloud)
    return cloud


# -- worker pools ------------------------------------------------------------------------------


def worker_script(shape: Shape) -> str:
    """A worker pool's startup script: its envs exported, then its `setup`, as written."""
    config = shape.group_config
    lines = ["#!/bin/bash"]
    for key, value in sorted((config.get("envs") or {}).items()):
        lines.append(f"export {key}={shlex.quote(str(value))}")
    lines.append(_SETUP_MARK)
    return "\n".join(lines) + "\n" + (shape.setup or "")


def worker_attributes(script: str | None) -> dict[str, Any]:
    """`setup` and `envs` read back from a worker pool's startup script."""
    head, mark, setup = (script or "").partition(_SETUP_MARK + "\n")
    if not mark:  # not the script poolform wrote: all of it is the setup
        return {"setup": script, "envs": {}}
    envs: dict[str, str] = {}
    for line in head.splitlines()[1:]:
        match = re.fullmatch(r"export ([A-Za-z_][A-Za-z0-9_]*)=(.*)", line)
        if match:
            envs[match[1]] = "".join(shlex.split(match[2]))
    return {"setup": setup or None, "envs": envs}
