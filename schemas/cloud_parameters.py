"""The shape of `advanced_instance_config`: cloud-native launch parameters passed through to
AWS (RunInstances / launch template data) or GCE (instance properties).

The map is free-form, but poolform itself reads and merges some of its fields (tags, network
interfaces, disks, reservations, market options). Those must have the shape the cloud's API
gives them, or a later step would fail half-way; a wrong shape is a validation error at its own
place (`instanceProperties.reservationAffinity: expected a mapping, got a list`).
"""

from __future__ import annotations

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


class _Node:
    """One step of the table as a tree: what the value here must be, and the steps below."""

    def __init__(self) -> None:
        self.expected: str | None = None
        self.children: dict[str, _Node] = {}


def _tree() -> _Node:
    root = _Node()
    for path, expected in SHAPES.items():
        node = root
        for step in path:
            node = node.children.setdefault(step, _Node())
        node.expected = expected
    return root


_ROOT = _tree()


_Mismatch = tuple[list[str | int], str, Any]


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    names: dict[type, str] = {dict: MAPPING, list: LIST, str: TEXT}
    return names.get(type(value), type(value).__name__)


def _check_child(step: str | int, item: Any, child: _Node) -> _Mismatch | None:
    expected = child.expected
    if expected is not None and not isinstance(item, _TYPES[expected]):
        return [step], expected, item
    if child.children:
        found = _mismatch(item, child)
        if found is not None:
            found[0].append(step)
            return found
    return None


def _mismatch(value: Any, node: _Node) -> _Mismatch | None:
    """Where the children of `value` break the table below `node` (the path, innermost step
    first), the shape expected there and the value found. Follows only the table's paths."""
    children = node.children
    if type(value) is dict:
        for step, child in children.items():
            if step in value:
                found = _check_child(step, value[step], child)
                if found is not None:
                    return found
    elif type(value) is list and ANY_INDEX in children:
        child = children[ANY_INDEX]
        for index, item in enumerate(value):
            found = _check_child(index, item, child)
            if found is not None:
                return found
    return None


def check_cloud_parameters(value: dict[str, Any]) -> dict[str, Any]:
    found = _mismatch(value, _ROOT) if value else None
    if found is not None:
        steps, expected, got = found
        raise PydanticCustomError(
            "cloud_shape",
            "the cloud expects {expected} here, got {got}",
            {"expected": expected, "got": _kind(got), "inner_path": tuple(reversed(steps))},
        )
    return value


CloudParameters = Annotated[dict[str, Any], AfterValidator(check_cloud_parameters)]
