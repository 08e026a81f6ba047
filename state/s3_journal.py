"""The S3 state as data: a snapshot document plus journal entries, folded together.

Pure functions, no I/O: ``fold`` applies one journal entry (one change) to the document a
snapshot holds. Records are kept as their stored fields (``state.records``), checksum included,
so a damaged one is found when read, as on every backend.
"""

from __future__ import annotations

import copy
from dataclasses import asdict
from typing import Any

from state.model import ControlObject, CreateIntent, HistoryEntry, ResourceRecord, StateSnapshot
from state.records import StoredRecord, decode_record, encode_object, encode_record

__all__ = [
    "empty_document",
    "fold",
    "history_of",
    "object_entry",
    "object_of",
    "record_fields",
    "snapshot_of",
]

Document = dict[str, Any]


def empty_document(lineage: str, salt: str) -> Document:
    return {
        "seq": 0,
        "lineage": lineage,
        "serial": 0,
        "salt": salt,
        "resources": {},
        "intents": {},
        "history": [],
        "objects": {},
    }


def record_fields(record: ResourceRecord) -> dict[str, Any]:
    return asdict(encode_record(record))


def object_entry(obj: ControlObject) -> dict[str, Any]:
    encode_object(obj)  # refused here when it cannot be stored
    return asdict(obj)


def fold(document: Document, entry: dict[str, Any]) -> None:
    """Apply one journal entry to the document, in place."""
    op = entry["op"]
    resources, intents, objects = document["resources"], document["intents"], document["objects"]
    if op == "write":
        record = entry["record"]
        resources[record["address"]] = record
        intents.pop(record["address"], None)
        document["serial"] = entry["serial"]
    elif op == "delete":
        resources.pop(entry["address"], None)
        intents.pop(entry["address"], None)
        document["serial"] = entry["serial"]
    elif op == "intent":
        intents.setdefault(entry["intent"]["address"], entry["intent"])
    elif op == "clear_intent":
        intents.pop(entry["address"], None)
    elif op == "history":
        document["history"].append(entry["entry"])
    elif op == "replace_all":
        document["resources"] = copy.deepcopy(entry["resources"])
        document["intents"] = copy.deepcopy(entry["intents"])
        document["serial"] = entry["serial"]
    elif op == "put_object":
        obj = entry["object"]
        objects[obj["object_id"]] = obj
        if entry.get("replaces"):
            objects.pop(entry["replaces"], None)
    elif op == "update_object":
        if entry["object_id"] in objects:
            objects[entry["object_id"]]["attributes"] = entry["attributes"]
    elif op == "retag_object":
        found = objects.get(entry["object_id"])
        if found is not None:
            found.update(address=entry["address"], lineage=entry["lineage"], tags=entry["tags"])
    elif op == "delete_object":
        objects.pop(entry["object_id"], None)
    else:
        raise ValueError(f"unknown journal operation {op!r}")
    document["seq"] = entry["seq"]


def snapshot_of(document: Document) -> StateSnapshot:
    """The StateSnapshot of a document; unreadable records are named in ``damaged``."""
    records: dict[str, ResourceRecord] = {}
    damaged: dict[str, str] = {}
    for address, fields in document["resources"].items():
        try:
            records[address] = decode_record(StoredRecord(**fields))
        except (ValueError, TypeError) as exc:
            damaged[address] = str(exc)
    intents = {a: CreateIntent(**i) for a, i in document["intents"].items()}
    return StateSnapshot(document["lineage"], document["serial"], records, intents, damaged)


def history_of(document: Document) -> list[HistoryEntry]:
    return [HistoryEntry(**entry) for entry in document["history"]]


def object_of(fields: dict[str, Any]) -> ControlObject:
    return ControlObject(**fields)
