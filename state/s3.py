"""The S3 state backend (boto3): objects under a prefix, one directory per lineage.

::

    PREFIX/head.json                              which lineage is current (and layout, moves)
    PREFIX/lock.json                              the lease (state.s3_lease)
    PREFIX/lineages/LINEAGE/snapshot.json         the state as of journal entry `seq`
    PREFIX/lineages/LINEAGE/journal/SEQ.json      one change each, written with If-None-Match: *

Every change is durable at once as one small journal object, without rewriting the whole state
(which would make an apply's bytes grow with the square of its size); a run's end folds the
journal into a new snapshot once the journal is worth it (a quarter of the snapshot's size),
so the bytes an apply writes stay linear in its changes. A journal key is taken by one writer
only, and a lock holder renews its lease (If-Match) before each write: a holder that lost its
lease can never write over newer state.

The backend is put together from its parts: the S3 calls (``state.s3_objects``), the lease
(``state.s3_lease``), the journal's entries (``state.s3_journal``), reading the state into a
cached document (``state.s3_reading``) and the writes every change is made of
(``state.s3_writing``); here are the changes themselves, the control-plane objects and the lock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from state.errors import LineageMismatch, ResourceNotFound, StateError
from state.locking import utc_now
from state.model import (
    ControlObject,
    CreateIntent,
    HistoryEntry,
    LockInfo,
    ResourceRecord,
    StateSnapshot,
)
from state.records import encode_object
from state.s3_journal import empty_document, object_entry, object_of, record_fields
from state.s3_reading import LAYOUT_VERSION
from state.s3_writing import S3Writing
from state.store_base import push_serial

__all__ = ["S3Backend"]


class S3Backend(S3Writing):
    """StateStore and Locker over an S3 bucket (any S3 API: AWS, moto, MinIO)."""

    # -- records, intents, history, whole copies -------------------------------------------

    def write_resource(self, record: ResourceRecord, *, expected_lineage: str) -> int:
        fields = record_fields(record)
        with self._changing() as doc:
            if doc["lineage"] != expected_lineage:
                raise LineageMismatch.replaced(expected_lineage, doc["lineage"])
            return int(self._append("write", record=fields, serial=doc["serial"] + 1)["serial"])

    def delete_resource(self, address: str, *, expected_lineage: str) -> int:
        with self._changing() as doc:
            if doc["lineage"] != expected_lineage:
                raise LineageMismatch.replaced(expected_lineage, doc["lineage"])
            if address not in doc["resources"]:
                raise ResourceNotFound(address)
            return int(self._append("delete", address=address, serial=doc["serial"] + 1)["serial"])

    def replace_all(self, snapshot: StateSnapshot, *, force: bool = False) -> int:
        resources = {r.address: record_fields(r) for r in snapshot}
        intents = {a: asdict(i) for a, i in snapshot.intents.items()}
        with self._changing() as doc:
            serial = push_serial(snapshot, doc["lineage"], doc["serial"], force=force)
            if snapshot.lineage == doc["lineage"]:
                self._append("replace_all", resources=resources, intents=intents, serial=serial)
                return serial
            new = {**empty_document(snapshot.lineage, doc["salt"]), "serial": serial}
            new.update(resources=resources, intents=intents, objects=doc["objects"])
            self._start(new)
            return serial

    def record_intent(self, address: str, token: str) -> CreateIntent:
        with self._changing() as doc:
            if address not in doc["intents"]:
                intent = CreateIntent(address, token, utc_now())
                doc = self._append("intent", intent=asdict(intent))
            return CreateIntent(**doc["intents"][address])

    def clear_intent(self, address: str) -> None:
        with self._mutex:
            doc = self._cached()
            if doc is not None and address in doc["intents"]:
                self._append("clear_intent", address=address)

    def append_history(self, entry: HistoryEntry) -> None:
        with self._changing():
            self._append("history", entry=asdict(entry))

    def adopt(
        self,
        snapshot: StateSnapshot,
        *,
        salt: str,
        history: Sequence[HistoryEntry],
        objects: Sequence[ControlObject],
    ) -> None:
        with self._mutex:
            if self._refresh() is not None:
                raise self._exists_already()
            doc = {**empty_document(snapshot.lineage, salt), "serial": snapshot.serial}
            doc["resources"] = {r.address: record_fields(r) for r in snapshot}
            doc["intents"] = {a: asdict(i) for a, i in snapshot.intents.items()}
            doc["history"] = [asdict(h) for h in history]
            doc["objects"] = {o.object_id: object_entry(o) for o in objects}
            self._start(doc)

    def mark_moved(self, destination: str) -> None:
        with self._changing() as doc:
            head = {"layout": LAYOUT_VERSION, "lineage": doc["lineage"], "moved_to": destination}
            self._fence()
            if (
                self._s3.put(f"{self.prefix}/head.json", self._dump(head), if_match=self._head_etag)
                is None
            ):
                raise StateError(f"the state at {self._where} changed while marking it moved")

    # -- control-plane objects ------------------------------------------------------------

    def _objects(self) -> dict[str, dict[str, Any]]:
        with self._mutex:
            doc = self._cached()
            return {} if doc is None else dict(doc["objects"])

    def list_objects(self, lineage: str) -> list[ControlObject]:
        found = self._objects()
        return [object_of(found[k]) for k in sorted(found) if found[k]["lineage"] == lineage]

    def all_objects(self) -> list[ControlObject]:
        found = self._objects()
        return [object_of(found[k]) for k in sorted(found)]

    def get_objects(self, object_ids: Sequence[str]) -> list[ControlObject]:
        found = self._objects()
        return [object_of(found[k]) for k in sorted(set(object_ids)) if k in found]

    def put_object(self, obj: ControlObject, *, replaces: str | None = None) -> ControlObject:
        fields = object_entry(obj)
        with self._changing() as doc:
            made = [o for o in doc["objects"].values() if obj.token and o["token"] == obj.token]
            if made:
                return object_of(made[0])
            self._append("put_object", object=fields, replaces=replaces)
        return obj

    def _change_object(self, object_id: str, op: str, **fields: Any) -> ControlObject | None:
        with self._mutex:
            doc = self._cached()
            if doc is None or object_id not in doc["objects"]:
                return None
            doc = self._append(op, object_id=object_id, **fields)
            return object_of(doc["objects"][object_id])

    def update_object(self, object_id: str, attributes: dict[str, Any]) -> ControlObject | None:
        encode_object(ControlObject(object_id, "", "", "", attributes))
        return self._change_object(object_id, "update_object", attributes=attributes)

    def retag_object(
        self, object_id: str, address: str, lineage: str, tags: dict[str, str]
    ) -> ControlObject | None:
        return self._change_object(
            object_id, "retag_object", address=address, lineage=lineage, tags=dict(tags)
        )

    def delete_object(self, object_id: str) -> bool:
        with self._mutex:
            doc = self._cached()
            if doc is None or object_id not in doc["objects"]:
                return False
            self._append("delete_object", object_id=object_id)
            return True

    # -- the lock -------------------------------------------------------------------------

    def lock(self, operation: str, *, timeout: float = 0, who: str | None = None) -> LockInfo:
        info = self.lease.lock(operation, timeout=timeout, who=who)
        with self._mutex:
            self._doc = None  # whatever was cached before the lock may be stale
        return info

    def unlock(self, lock_id: str) -> None:
        try:
            if self.lease.held is not None and self.lease.held.lock_id == lock_id:
                self.compact()
        finally:
            self.lease.unlock(lock_id)

    def force_unlock(self, lock_id: str) -> None:
        self.lease.force_unlock(lock_id)

    def current_lock(self) -> LockInfo | None:
        return self.lease.current_lock()

    def confirm_held(self) -> None:
        # A renewal, not a read: it fails when the lease was taken over, and otherwise gives
        # the change about to be made a whole lease of its own.
        self.lease.renew()

    def close(self) -> None:
        self._s3.close()


if TYPE_CHECKING:
    from state.protocol import StateBackend

    def _conforms(backend: S3Backend) -> StateBackend:
        return backend
