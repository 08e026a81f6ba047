"""The shape of `advanced_instance_config`: cloud-native launch parameters passed through to
AWS (RunInstances / launch template data) or GCE (instance properties).

The map is free-form, but poolform itself reads and merges some of its fields (tags, network
interfaces, disks, reservations, market options). Those must have the shape the cloud's API
gives them, or a later step would fail half-way; a wrong shape is a validation error at its own
place (`instanceProperties.reservationAffinity: expected a mapping, got a list`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator
from pydantic_core import PydanticCustomError

MAPPING, LIST, TEXT = "a mapping", "a list", "a string"
_TYPES: dict[str, type | tuple[type, ...]] = {MAPPING: dict, LIST: list, TEXT: str}
ANY_INDEX = "*"

_AWS: dict[tuple[str, ...], str] = {
    ("CapacityReservationSpecification",): MAPPING,
    ("InstanceMarketOptions",): MAPPING,
    ("InstanceMarketOptions", "MarketType"): TEXT,
    ("ImageId",): TEXT,
    ("TagSpecifications",): LIST,
    ("TagSpecifications", ANY_INDEX): MAPPING,
    ("TagSpecifications", ANY_INDEX, "ResourceType"): TEXT,
    ("TagSpecifications", ANY_INDEX, "Tags"): LIST,
    ("TagSpecifications", ANY_INDEX, "Tags", ANY_INDEX): MAPPING,
    ("TagSpecifications", ANY_INDEX, "Tags", ANY_INDEX, "Key"): TEXT,
    ("NetworkInterfaces",): LIST,
    ("NetworkInterfaces", ANY_INDEX): MAPPING,
    ("BlockDeviceMappings",): LIST,
    ("BlockDeviceMappings", ANY_INDEX): MAPPING,
}


def _gcp() -> dict[tuple[str, ...], str]:
    shapes: dict[tuple[str, ...], str] = {}
    for properties in ("instanceProperties", "instance_properties"):
        shapes[(properties,)] = MAPPING
        for affinity in ("reservationAffinity", "reservation_affinity"):
            shapes[(properties, affinity)] = MAPPING
            for kind in ("consumeReservationType", "consume_reservation_type"):
                shapes[(properties, affinity, kind)] = TEXT
        for interfaces in ("networkInterfaces", "network_interfaces"):
            shapes[(properties, interfaces)] = LIST
            shapes[(properties, interfaces, ANY_INDEX)] = MAPPING
        shapes[(properties, "labels")] = MAPPING
        shapes[(properties, "disks")] = LIST
        shapes[(properties, "disks", ANY_INDEX)] = MAPPING
        shapes[(properties, "scheduling")] = MAPPING
        shapes[(properties, "metadata")] = MAPPING
        shapes[(properties, "metadata", "items")] = LIST
        shapes[(properties, "metadata", "items", ANY_INDEX)] = MAPPING
    return shapes


SHAPES = {**_AWS, **_gcp()}
_CONTAINERS = {path[:depth] for path in SHAPES for depth in range(1, len(path))}


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    names: dict[type, str] = {dict: MAPPING, list: LIST, str: TEXT}
    return names.get(type(value), type(value).__name__)


def _check(value: Any, path: tuple[str | int, ...], pattern: tuple[str, ...]) -> None:
    expected = SHAPES.get(pattern)
    if expected is not None and not isinstance(value, _TYPES[expected]):
        raise PydanticCustomError(
            "cloud_shape",
            "the cloud expects {expected} here, got {got}",
            {
                "expected": expected,
                "got": _kind(value),
                "inner_path": path,
            },
        )
    if pattern not in _CONTAINERS and pattern != ():
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            _check(item, (*path, key), (*pattern, str(key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _check(item, (*path, index), (*pattern, ANY_INDEX))


def check_cloud_parameters(value: dict[str, Any]) -> dict[str, Any]:
    _check(value, (), ())
    return value


CloudParameters = Annotated[dict[str, Any], AfterValidator(check_cloud_parameters)]
