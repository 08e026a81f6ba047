"""The documented JSON document of ``poolform state pull`` / ``state push``.

::

    {
      "format_version": 1,
      "lineage": "<uuid4>",
      "serial": 42,
      "resources": [
        {"address": "...", "resource_type": "...", "schema_version": 1, "attributes": {...},
         "provider_ids": {"...": "..."}, "dependencies": ["..."], "tainted": false}
      ],
      "intents": [{"address": "...", "token": "...", "created": "<iso time>"}]
    }

``resources`` and ``intents`` are sorted by address. ``intents`` may be omitted on input; a
record's ``resource_type`` is read from ``kind`` in documents written before it was renamed.
"""

from __future__ import annotations

import json
from typing import Any

from state.errors import StateError
from state.model import CreateIntent, ResourceRecord, StateSnapshot

__all__ = [
    "FORMAT_VERSION",
    "dump_attributes",
    "record_from_dict",
    "record_to_dict",
    "snapshot_from_json",
    "snapshot_to_json",
]

FORMAT_VERSION = 1


def dump_attributes(value: object, *, what: str) -> str:
    """Canonical JSON text of ``value``; StateError when it is not JSON-serialisable."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise StateError(f"{what} is not JSON-serialisable: {exc}") from exc


def record_to_dict(record: ResourceRecord) -> dict[str, Any]:
    return {
        "address": record.address,
        "resource_type": record.resource_type,
        "schema_version": record.schema_version,
        "attributes": record.attributes,
        "provider_ids": dict(record.provider_ids),
        "dependencies": list(record.dependencies),
        "tainted": record.tainted,
    }


def _require(doc: dict[str, Any], key: str, typ: type | tuple[type, ...], where: str) -> Any:
    if key not in doc:
        raise StateError(f"{where}: missing field {key!r}")
    value = doc[key]
    if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
        raise StateError(f"{where}: field {key!r} has the wrong type ({type(value).__name__})")
    return value


def record_from_dict(doc: Any, where: str = "resource") -> ResourceRecord:
    if not isinstance(doc, dict):
        raise StateError(f"{where}: expected an object")
    address = _require(doc, "address", str, where)
    where = f"resource {address!r}"
    provider_ids = doc.get("provider_ids", {})
    dependencies = doc.get("dependencies", [])
    if not isinstance(provider_ids, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in provider_ids.items()
    ):
        raise StateError(f"{where}: provider_ids must map strings to strings")
    if not isinstance(dependencies, list) or not all(isinstance(d, str) for d in dependencies):
        raise StateError(f"{where}: dependencies must be a list of addresses")
    tainted = doc.get("tainted", False)
    schema_version = doc.get("schema_version", 1)
    if not isinstance(tainted, bool):
        raise StateError(f"{where}: tainted must be true or false")
    if not isinstance(schema_version, int) or isinstance(schema_version, bool):
        raise StateError(f"{where}: schema_version must be an integer")
    return ResourceRecord(
        address=address,
        resource_type=_require(
            doc, "resource_type" if "resource_type" in doc else "kind", str, where
        ),
        attributes=_require(doc, "attributes", dict, where),
        provider_ids=dict(provider_ids),
        dependencies=tuple(dependencies),
        tainted=tainted,
        schema_version=schema_version,
    )


def snapshot_to_json(snapshot: StateSnapshot) -> dict[str, Any]:
    """The pull document of ``snapshot``."""
    return {
        "format_version": FORMAT_VERSION,
        "lineage": snapshot.lineage,
        "serial": snapshot.serial,
        "resources": [record_to_dict(r) for r in snapshot],
        "intents": [
            {"address": i.address, "token": i.token, "created": i.created}
            for i in snapshot.intents.values()
        ],
    }


def snapshot_from_json(doc: Any) -> StateSnapshot:
    """Parse and validate a push document; StateError names the first problem."""
    if not isinstance(doc, dict):
        raise StateError("state document: expected a JSON object")
    version = _require(doc, "format_version", int, "state document")
    if version != FORMAT_VERSION:
        raise StateError(
            f"state document: format_version {version} is not supported (expected {FORMAT_VERSION})"
        )
    lineage = _require(doc, "lineage", str, "state document")
    serial = _require(doc, "serial", int, "state document")
    resources = _require(doc, "resources", list, "state document")
    records = [record_from_dict(r, f"resources[{n}]") for n, r in enumerate(resources)]
    addresses = [r.address for r in records]
    if len(set(addresses)) != len(addresses):
        raise StateError("state document: duplicate resource addresses")
    for record in records:
        dump_attributes(record.attributes, what=f"resource {record.address!r} attributes")
    intents: dict[str, CreateIntent] = {}
    for n, item in enumerate(doc.get("intents", [])):
        where = f"intents[{n}]"
        if not isinstance(item, dict):
            raise StateError(f"{where}: expected an object")
        intent = CreateIntent(
            address=_require(item, "address", str, where),
            token=_require(item, "token", str, where),
            created=_require(item, "created", str, where),
        )
        intents[intent.address] = intent
    return StateSnapshot.from_records(lineage, serial, records, intents)
