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
``salt_check`` (optional) identifies the salt the sensitive values were hashed with, without
revealing it, so a push onto a state salted otherwise is refused instead of planning a
replacement of every sensitive resource.

A pushed document is checked field by field before anything is written: wrong shapes, nulls
where a value is required, serials outside 0..2^63-1, NaN, and nesting deeper than 64 levels are
refused with the field named.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections import Counter
from typing import Any

from state.errors import StateError
from state.model import CreateIntent, ResourceRecord, StateSnapshot
from state.records import (
    MAX_DEPTH,
    MAX_SERIAL,
    check_depth,
    check_text,
    dump_json,
    encode_record,
)

__all__ = [
    "FORMAT_VERSION",
    "dump_attributes",
    "parse_document",
    "record_from_dict",
    "record_to_dict",
    "salt_check",
    "snapshot_from_json",
    "snapshot_to_json",
]

FORMAT_VERSION = 1


def dump_attributes(value: object, *, what: str) -> str:
    """Canonical JSON text of ``value``; StateError when it is not JSON-serialisable."""
    return dump_json(value, what=what)


def salt_check(salt: str) -> str:
    """A short value that tells two salts apart and reveals nothing of either."""
    return hmac.new(salt.encode(), b"poolform salt check", hashlib.sha256).hexdigest()[:16]


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"the key {key!r} appears twice in one object")
        seen.add(key)
    return dict(pairs)


def parse_document(text: str, where: str) -> Any:
    """JSON text -> value; StateError for invalid JSON, NaN/Infinity, a key given twice in one
    object (which of the two counts is up to the reader) or absurd nesting."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys)
    except RecursionError:
        raise StateError(f"{where}: nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        raise StateError(f"{where}: not a state document: {exc}") from None
    check_depth(value, where, MAX_DEPTH + 4)  # the document's own levels around attributes
    return value


def record_to_dict(record: ResourceRecord) -> dict[str, Any]:
    return {
        "address": record.address,
        "resource_type": record.resource_type,
        "schema_version": record.schema_version,
        "attributes": record.attributes,
        "provider_ids": dict(record.provider_ids),
        "dependencies": list(record.dependencies),
        "tainted": record.tainted,
        **({"place": record.place} if record.place else {}),  # absent: unknown, as before
    }


def _require(doc: dict[str, Any], key: str, typ: type | tuple[type, ...], where: str) -> Any:
    if key not in doc:
        raise StateError(f"{where}: missing field {key!r}")
    value = doc[key]
    if value is None:
        raise StateError(f"{where}: field {key!r} is null")
    if not isinstance(value, typ) or (typ is int and isinstance(value, bool)):
        raise StateError(f"{where}: field {key!r} has the wrong type ({type(value).__name__})")
    return value


def _count(doc: dict[str, Any], key: str, where: str, upper: int) -> int:
    value: int = _require(doc, key, int, where)
    if not 0 <= value <= upper:
        raise StateError(f"{where}: field {key!r} is {value}, outside 0..{upper}")
    return value


# Dotted segments: `cluster.main`, `machine_pool.gpu.machine_type.cpu`. A pushed record whose
# address is not one (`../x`, `a..b`) would be planned for deletion as undeclared.
# A lineage names the state everywhere: an S3 key's directory (`PREFIX/lineages/LINEAGE/`),
# a cloud tag's value, the command a damaged S3 state's message gives to put its head back.
# poolform makes uuid4s; a pushed one is held to the same few characters, so `a/b` or `..`
# cannot make keys of other directories nor a quote break that command.
_LINEAGE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_ADDRESS = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+")


def record_from_dict(doc: Any, where: str = "resource") -> ResourceRecord:
    if not isinstance(doc, dict):
        raise StateError(f"{where}: expected an object")
    address = check_text(_require(doc, "address", str, where), f"{where} address")
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
    if not 0 <= schema_version < 2**31:
        raise StateError(f"{where}: schema_version {schema_version} is out of range")
    place = doc.get("place", "")
    if not isinstance(place, str):
        raise StateError(f"{where}: place must be a string")
    resource_type = _require(doc, "resource_type" if "resource_type" in doc else "kind", str, where)
    if not _ADDRESS.fullmatch(address) or resource_type not in address.split(".")[:-1]:
        raise StateError(f"{where}: not the address of a {resource_type!r} (TYPE.NAME, dotted)")
    record = ResourceRecord(
        address=address,
        resource_type=check_text(resource_type, f"{where} resource_type"),
        attributes=_require(doc, "attributes", dict, where),
        provider_ids=dict(provider_ids),
        dependencies=tuple(dependencies),
        tainted=tainted,
        schema_version=schema_version,
        place=place,
    )
    encode_record(record)  # nesting, NaN, lone surrogates: refused here, not when stored
    return record


def snapshot_to_json(snapshot: StateSnapshot, *, salt: str | None = None) -> dict[str, Any]:
    """The pull document of ``snapshot`` (with the check value of ``salt`` when given)."""
    extra = {"salt_check": salt_check(salt)} if salt is not None else {}
    return {
        **extra,
        "format_version": FORMAT_VERSION,
        "lineage": snapshot.lineage,
        "serial": snapshot.serial,
        "resources": [record_to_dict(r) for r in snapshot],
        "intents": [
            {"address": i.address, "token": i.token, "created": i.created}
            for i in snapshot.intents.values()
        ],
    }


def _refuse_shared_ids(records: list[ResourceRecord]) -> None:
    """One cloud object recorded at two addresses: the plan would destroy the one the
    configuration no longer declares, and with it the object the other still uses."""
    owners: dict[str, str] = {}
    for record in records:
        for key, value in sorted(record.provider_ids.items()):
            owner = owners.setdefault(value, record.address)
            if owner != record.address:
                raise StateError(
                    f"resource {record.address!r}: provider_ids {key} {value!r} is also "
                    f"recorded for {owner!r}: one cloud object cannot be two resources"
                )


def _refuse_cycles(records: list[ResourceRecord]) -> None:
    """Dependencies apply recorded never loop; a loop pushed would stop every later plan that
    orders these records (a destroy: "the change graph has a cycle") until it is pushed away."""
    needs = {r.address: [d for d in r.dependencies if d] for r in records}
    done: set[str] = set()
    for start in sorted(needs):
        path: list[str] = []
        on_path: set[str] = set()
        stack: list[tuple[str, int]] = [(start, 0)]
        while stack:
            address, step = stack.pop()
            if step == 0:
                if address in done:
                    continue
                path.append(address)
                on_path.add(address)
            following = needs.get(address, [])
            if step < len(following):
                stack.append((address, step + 1))
                nxt = following[step]
                if nxt in on_path:
                    loop = [*path[path.index(nxt) :], nxt]
                    raise StateError(
                        f"resource {loop[0]!r}: its dependencies loop back to it "
                        f"({' -> '.join(loop)}); apply never records a cycle"
                    )
                if nxt not in done and nxt in needs:
                    stack.append((nxt, 0))
                continue
            path.pop()
            on_path.discard(address)
            done.add(address)


def snapshot_from_json(doc: Any) -> StateSnapshot:
    """Parse and validate a push document; StateError names the first problem."""
    if not isinstance(doc, dict):
        raise StateError("state document: expected a JSON object")
    version = _require(doc, "format_version", int, "state document")
    if version != FORMAT_VERSION:
        raise StateError(
            f"state document: format_version {version} is not supported (expected {FORMAT_VERSION})"
        )
    lineage = check_text(_require(doc, "lineage", str, "state document"), "state document lineage")
    if not _LINEAGE.fullmatch(lineage):
        raise StateError(
            f"state document: lineage {lineage[:80]!r}{'...' if len(lineage) > 80 else ''} is "
            "not one poolform makes: letters, digits, '.', '_' and '-' only, at most 128, "
            "starting with a letter or digit (a new state's is a uuid4)"
        )
    serial = _count(doc, "serial", "state document", MAX_SERIAL)
    resources = _require(doc, "resources", list, "state document")
    records = [record_from_dict(r, f"resources[{n}]") for n, r in enumerate(resources)]
    addresses = [r.address for r in records]
    twice = sorted(a for a, n in Counter(addresses).items() if n > 1)
    if twice:
        raise StateError(f"state document: resource {twice[0]!r} is recorded twice")
    _refuse_shared_ids(records)
    _refuse_cycles(records)
    intents: dict[str, CreateIntent] = {}
    items = doc.get("intents", [])
    if not isinstance(items, list):
        raise StateError("state document: field 'intents' must be a list")
    for n, item in enumerate(items):
        where = f"intents[{n}]"
        if not isinstance(item, dict):
            raise StateError(f"{where}: expected an object")
        intent = CreateIntent(
            address=check_text(_require(item, "address", str, where), f"{where} address"),
            token=check_text(_require(item, "token", str, where), f"{where} token"),
            created=check_text(_require(item, "created", str, where), f"{where} created"),
        )
        intents[intent.address] = intent
    return StateSnapshot.from_records(lineage, serial, records, intents)
