"""A resource record as stored text, and back, with every check a stored record must pass.

Every backend stores a record as the same fields of canonical JSON text plus a checksum of
them, so a record changed by a flipped byte (or by hand) is found and named when it is read,
instead of being planned against or failing every command.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from state.errors import StateDamaged, StateError
from state.model import ControlObject, ResourceRecord

__all__ = [
    "MAX_DEPTH",
    "MAX_SERIAL",
    "StoredRecord",
    "check_depth",
    "check_text",
    "decode_object",
    "decode_record",
    "dump_json",
    "encode_object",
    "encode_record",
]

MAX_SERIAL = 2**63 - 1  # a signed 64-bit integer: SQLite's and PostgreSQL's bigint
MAX_DEPTH = 64  # nesting of attributes; deeper is refused rather than recursed into
# A record's place is kept in its stored provider_ids under this key (no id kind starts with
# `@`): every backend stores it with no new column, and a record without one (all written
# before places were recorded) is stored byte for byte as before, checksum included.
PLACE_KEY = "@place"


@dataclass(frozen=True, slots=True)
class StoredRecord:
    """A record's stored fields: JSON text for the structured ones, and their checksum."""

    address: str
    resource_type: str
    schema_version: int
    attributes: str
    provider_ids: str
    dependencies: str
    tainted: bool
    checksum: str


def dump_json(value: object, *, what: str) -> str:
    """Canonical JSON text of ``value``; StateError when it is not JSON-serialisable."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise StateError(f"{what} is not JSON-serialisable: {exc}") from exc


def check_text(value: object, what: str) -> str:
    """``value`` as a non-empty string without control characters or lone surrogates."""
    if not isinstance(value, str) or not value:
        raise StateError(f"{what} must be a non-empty string")
    bad = next(
        (c for c in value if ord(c) < 0x20 or ord(c) == 0x7F or 0xD800 <= ord(c) < 0xE000), None
    )
    if bad is not None:
        raise StateError(f"{what} {value!r} contains the character U+{ord(bad):04X}")
    return value


def check_depth(value: object, what: str, limit: int = MAX_DEPTH) -> None:
    """Refuse values nested deeper than ``limit`` (walked without recursion)."""
    stack: list[tuple[object, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                raise StateError(f"{what} is nested deeper than {limit} levels")
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)


def _checksum(
    address: str,
    resource_type: str,
    schema_version: int,
    attributes: str,
    provider_ids: str,
    dependencies: str,
    tainted: bool,
) -> str:
    fields = (address, resource_type, str(int(schema_version)), attributes, provider_ids)
    text = "\x1f".join((*fields, dependencies, str(int(bool(tainted)))))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def encode_record(record: ResourceRecord) -> StoredRecord:
    """The stored fields of ``record``; StateError names what cannot be stored."""
    address = check_text(record.address, "resource address")
    where = f"resource {address!r}"
    resource_type = check_text(record.resource_type, f"{where} resource_type")
    if not isinstance(record.attributes, dict):
        raise StateError(f"{where} attributes must be an object")
    check_depth(record.attributes, f"{where} attributes")
    attributes = dump_json(record.attributes, what=f"{where} attributes")
    if PLACE_KEY in record.provider_ids:
        raise StateError(f"{where} provider_ids: the id kind {PLACE_KEY!r} is reserved")
    ids = dict(record.provider_ids)
    if record.place:
        ids[PLACE_KEY] = check_text(record.place, f"{where} place")
    provider_ids = dump_json(ids, what=f"{where} provider_ids")
    dependencies = dump_json(list(record.dependencies), what=f"{where} dependencies")
    version = int(record.schema_version)
    tainted = bool(record.tainted)
    checksum = _checksum(
        address, resource_type, version, attributes, provider_ids, dependencies, tainted
    )
    return StoredRecord(
        address, resource_type, version, attributes, provider_ids, dependencies, tainted, checksum
    )


def decode_record(stored: StoredRecord) -> ResourceRecord:
    """The record of stored fields; ValueError says what is wrong with them."""
    s = stored
    if s.checksum and s.checksum != _checksum(
        s.address,
        s.resource_type,
        s.schema_version,
        s.attributes,
        s.provider_ids,
        s.dependencies,
        s.tainted,
    ):
        raise ValueError("its checksum does not match: it was damaged or edited outside poolform")
    attributes = _loads(s.attributes, "attributes")
    provider_ids = _loads(s.provider_ids, "provider_ids")
    dependencies = _loads(s.dependencies, "dependencies")
    if not isinstance(attributes, dict):
        raise ValueError("attributes are not a JSON object")
    if not isinstance(provider_ids, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in provider_ids.items()
    ):
        raise ValueError("provider_ids do not map strings to strings")
    place = provider_ids.pop(PLACE_KEY, "")
    if not isinstance(dependencies, list) or not all(isinstance(d, str) for d in dependencies):
        raise ValueError("dependencies are not a list of addresses")
    if not s.resource_type:
        raise ValueError("it has no resource type")
    return ResourceRecord(
        s.address,
        s.resource_type,
        attributes,
        provider_ids,
        tuple(dependencies),
        bool(s.tainted),
        int(s.schema_version),
        place,
    )


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


_DECODE = json.JSONDecoder(parse_constant=_no_constant).decode  # one decoder: C scanner, no NaN


def _loads(text: str, what: str) -> Any:
    try:
        return _DECODE(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{what} are not valid JSON ({exc})") from None


def encode_object(obj: ControlObject) -> tuple[str, str]:
    """The stored JSON text of an object's attributes and tags."""
    where = f"control-plane object {obj.object_id!r} ({obj.address})"
    check_depth(obj.attributes, f"{where} attributes")
    return (
        dump_json(dict(obj.attributes), what=f"{where} attributes"),
        dump_json(dict(obj.tags), what=f"{where} tags"),
    )


def decode_object(
    object_id: str,
    address: str,
    lineage: str,
    resource_type: str,
    attributes: str,
    tags: str,
    token: str,
) -> ControlObject:
    where = f"control-plane object {object_id!r} ({address})"
    try:
        values = _loads(attributes, "its attributes"), _loads(tags, "its tags")
    except ValueError as exc:
        raise StateDamaged(f"the state's {where} is damaged: {exc}") from None
    if not all(isinstance(value, dict) for value in values):
        raise StateDamaged(f"the state's {where} is damaged: its attributes or tags are no map")
    return ControlObject(object_id, address, lineage, resource_type, values[0], values[1], token)
