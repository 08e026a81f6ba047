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
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from state.errors import (
    DamagedRecords,
    LineageMismatch,
    ResourceNotFound,
    SerialConflict,
    StateDamaged,
    StateError,
    StateMoved,
)
from state.fresh import FreshState, created, fresh_salt, fresh_state_for
from state.locking import Clock, Sleep, utc_now
from state.model import (
    ControlObject,
    CreateIntent,
    HistoryEntry,
    LockInfo,
    ResourceRecord,
    StateSnapshot,
)
from state.records import MAX_SERIAL, encode_object
from state.s3_journal import (
    Document,
    empty_document,
    fold,
    history_of,
    object_entry,
    object_of,
    record_fields,
    snapshot_of,
)
from state.s3_lease import Lease, S3Calls
from state.s3_objects import S3Objects

__all__ = ["S3Backend"]

LAYOUT_VERSION = 1
_UNLOCKED_READS = 3  # tries of a read without the lock that meets a journal being folded


class S3Backend:
    """StateStore and Locker over an S3 bucket (any S3 API: AWS, moto, MinIO)."""

    def __init__(
        self,
        bucket: str,
        prefix: str = "poolform",
        *,
        region: str | None = None,
        endpoint_url: str | None = None,
        directory: str = "",
        lease_seconds: float = 30.0,
        renew: bool = True,
        clock: Clock = time.monotonic,
        wall: Clock = time.time,
        sleep: Sleep = time.sleep,
    ) -> None:
        self.bucket, self.prefix = bucket, prefix.strip("/")
        self._where = f"s3://{bucket}/{self.prefix}"
        self._s3 = S3Objects(bucket, self._where, region=region, endpoint_url=endpoint_url)
        self._mutex = threading.RLock()
        self._doc: Document | None = None
        self._head_etag: str | None = None
        self._snapshot_etag: str | None = None
        self._snapshot_bytes = 0
        self._journal: list[tuple[str, int]] = []  # entries written since the snapshot
        self._fresh: FreshState | None = None
        self._sleep = sleep
        self.lease = Lease(
            S3Calls(self._s3.get, self._s3.put),
            f"{self.prefix}/lock.json",
            where=self._where,
            seconds=lease_seconds,
            renew_every=lease_seconds / 3 if renew else None,
            directory=directory,
            clock=clock,
            wall=wall,
            sleep=sleep,
        )
        with self._mutex:
            self._refresh()

    # -- keys and documents ---------------------------------------------------------------

    def _base(self, lineage: str) -> str:
        return f"{self.prefix}/lineages/{lineage}"

    def _entry_key(self, lineage: str, seq: int) -> str:
        return f"{self._base(lineage)}/journal/{seq:020d}.json"

    def _parse(self, data: bytes, key: str) -> Any:
        try:
            return json.loads(data)
        except ValueError as exc:
            raise StateDamaged(f"the S3 state object {key} is damaged: {exc}") from None
        except RecursionError:  # nesting no state document has
            raise StateDamaged(f"the S3 state object {key} is damaged: nested too deeply") from None

    @staticmethod
    def _dump(value: Any) -> bytes:
        return json.dumps(value, sort_keys=True, separators=(",", ":")).encode()

    # -- reading --------------------------------------------------------------------------

    @property
    def location(self) -> str:
        return self._where

    @property
    def frees_dead_holder(self) -> bool:
        return True

    def _refresh(self) -> Document | None:
        """Bring the cached document up to date with S3 (None: no state here yet).

        A reader that does not hold the lock (`plan --no-lock`, `show`, `state pull`, a job
        command) races the holder, whose run ends by folding the journal into a new snapshot
        and deleting the folded entries: a snapshot fetched just before that fold is followed
        by no entry it can take (the first ones are gone, the next writer's come after a gap),
        which reads as damage. Such a reader starts again from the head, with nothing cached;
        damage that stays is reported. A holder has no one to race: its damage is real."""
        for attempt in range(_UNLOCKED_READS):
            try:
                return self._refresh_once()
            except StateDamaged:
                if self.lease.held is not None or attempt == _UNLOCKED_READS - 1:
                    raise
                self._doc = None
                self._sleep(0.2 * (attempt + 1))
        raise AssertionError("unreachable")

    def _refresh_once(self) -> Document | None:
        head_key = f"{self.prefix}/head.json"
        found = self._s3.get(head_key)
        if found is None:
            self._doc = None
            return None
        head = self._parse(found[0], head_key)
        self._head_etag = found[1]
        layout = head.get("layout") if isinstance(head, dict) else None
        if not isinstance(layout, int) or not isinstance(head.get("lineage"), str):
            raise StateDamaged(f"the S3 state object {head_key} is damaged: no layout or lineage")
        if layout > LAYOUT_VERSION:
            raise StateDamaged(
                f"the state at {self._where} has layout version {layout}, newer than this "
                f"poolform understands ({LAYOUT_VERSION}); upgrade poolform"
            )
        if head.get("moved_to"):
            raise StateMoved(self._where, head["moved_to"])
        lineage = head["lineage"]
        if self._doc is None or self._doc["lineage"] != lineage:
            key = f"{self._base(lineage)}/snapshot.json"
            snapshot = self._s3.get(key)
            if snapshot is None:
                raise StateDamaged(f"the state at {self._where} is damaged: {key} is missing")
            self._doc = self._parse(snapshot[0], key)
            self._snapshot_etag, self._snapshot_bytes = snapshot[1], len(snapshot[0])
            self._journal = []
        self._catch_up(self._doc)
        return self._doc

    def _catch_up(self, doc: Document) -> None:
        lineage, seq = doc["lineage"], doc["seq"]
        keys = self._s3.keys(f"{self._base(lineage)}/journal/", self._entry_key(lineage, seq))
        if not keys:
            return
        with ThreadPoolExecutor(max_workers=min(8, len(keys))) as pool:
            bodies = list(pool.map(self._s3.get, keys))
        for key, body in zip(keys, bodies, strict=True):
            if body is None:
                continue  # folded into a snapshot meanwhile
            entry = self._parse(body[0], key)
            if not isinstance(entry, dict) or entry.get("seq") != doc["seq"] + 1:
                raise StateDamaged(f"the S3 state journal is damaged at {key}")
            try:
                fold(doc, entry)
            except (KeyError, TypeError, ValueError) as exc:
                raise StateDamaged(f"the S3 state journal entry {key} is damaged: {exc}") from None
            self._journal.append((key, len(body[0])))

    def _fresh_state(self) -> FreshState:
        if self._fresh is None:
            self._fresh = fresh_state_for(self._where)
        return self._fresh

    def exists(self) -> bool:
        with self._mutex:
            return self._doc is not None or self._refresh() is not None

    def read(self) -> StateSnapshot:
        snapshot = self.read_salvaged()
        if snapshot.damaged:
            raise DamagedRecords(dict(snapshot.damaged), self._where)
        return snapshot

    def read_salvaged(self) -> StateSnapshot:
        with self._mutex:
            doc = self._refresh()
            if doc is None:
                self._refuse_headless()
                return StateSnapshot(self._fresh_state().lineage, 0)
            return snapshot_of(doc)

    def _refuse_headless(self) -> None:
        """No head, yet a lineage directory under the prefix: the head of a state was deleted
        (by hand, a lifecycle rule, another tool). Read as no state, the next apply would
        start a new lineage beside it and plan the control-plane objects it keeps afresh:
        damage, never a fresh start. (`exists()` still says no, so that `state migrate` run
        again after it was cut off between its snapshot and its head can finish.)"""
        lineages = f"{self.prefix}/lineages/"
        found = self._s3.keys(lineages, first=True)
        if not found:
            return
        # A first apply writes its snapshot, then its head, under the lock: another runner
        # holding the lock (or a head there now) is a state being made, not a head lost.
        if self._s3.get(f"{self.prefix}/head.json") is not None or (
            self.lease.held is None and self.lease.current_lock() is not None
        ):
            return
        lineage = found[0][len(lineages) :].split("/", 1)[0]
        head = json.dumps({"layout": LAYOUT_VERSION, "lineage": lineage})
        raise StateDamaged(
            f"the state at {self._where} is damaged: {self.prefix}/head.json is missing, but "
            f"{lineages}{lineage}/ holds a state (lineage {lineage}); no new state is started "
            f"beside it. If it is this configuration's, put its head back: `echo '{head}' | "
            f"aws s3 cp - s3://{self.bucket}/{self.prefix}/head.json`; otherwise give this "
            "configuration another `state.key`"
        )

    def history(self) -> list[HistoryEntry]:
        with self._mutex:
            doc = self._refresh()
            return [] if doc is None else history_of(doc)

    def salt(self, lineage: str) -> str:
        with self._mutex:
            doc = self._doc if self._doc is not None else self._refresh()
            if doc is None:
                fresh = self._fresh_state()
                known = fresh.salt if lineage == fresh.lineage else fresh_salt(lineage)
                if known is None:
                    raise LineageMismatch(lineage, fresh.lineage, hint="there is no state yet")
                return known
            if doc["lineage"] != lineage:
                raise LineageMismatch(lineage, doc["lineage"])
            return str(doc["salt"])

    # -- writing --------------------------------------------------------------------------

    def _start(self, doc: Document) -> None:
        """Publish a new lineage directory and point the head at it (creating the state, or
        switching lineage for a forced push)."""
        key = f"{self._base(doc['lineage'])}/snapshot.json"
        body = self._dump(doc)
        etag = self._s3.put(key, body, if_none_match=True)
        if etag is None:
            raise self._not_overwritten(key)
        head = self._dump({"layout": LAYOUT_VERSION, "lineage": doc["lineage"]})
        head_key = f"{self.prefix}/head.json"
        creating = self._doc is None
        if creating:
            head_etag = self._s3.put(head_key, head, if_none_match=True)
        else:
            self._fence()
            head_etag = self._s3.put(head_key, head, if_match=self._head_etag)
        if head_etag is None:
            self._doc = None
            if not creating:
                raise StateError(f"the state at {self._where} changed while switching lineage")
            self._refresh()  # another process created it first: its lineage wins
            return
        self._doc, self._head_etag = doc, head_etag
        self._snapshot_etag, self._snapshot_bytes, self._journal = etag, len(body), []
        created(self._where)

    def _not_overwritten(self, key: str) -> StateError:
        """A snapshot at `key` that is not the one being written (one that is, a copy of this
        state cut off between its snapshot and its head left, and `_put` takes as written):
        never overwritten; one no head points at is named with the command that removes it."""
        directory = key.rsplit("/", 1)[0]
        hint = ""
        if self._doc is None:
            hint = (
                f": no head.json points at it (a copy of this state cut short); after checking "
                f"it holds nothing you need, `aws s3 rm --recursive s3://{self.bucket}/"
                f"{directory}/` removes it"
            )
        return StateError(f"the S3 state {key} exists already; refusing to overwrite it{hint}")

    def _current(self) -> Document:
        doc = self._doc if self._doc is not None else self._refresh()
        if doc is None:
            self._refuse_headless()
            fresh = self._fresh_state()
            self._start(empty_document(fresh.lineage, fresh.salt))
            doc = self._doc
        assert doc is not None
        return doc

    def _fence(self) -> None:
        if self.lease.held is not None:
            self.lease.renew()

    def _append(self, op: str, **fields: Any) -> Document:
        """Write one change as the next journal entry, then fold it into the cached state."""
        doc = self._current()
        self._fence()
        seq = doc["seq"] + 1
        entry = {"op": op, "seq": seq, **fields}
        key = self._entry_key(doc["lineage"], seq)
        body = self._dump(entry)
        if self._s3.put(key, body, if_none_match=True) is None:
            self._doc = None  # someone else wrote: start again from what S3 holds
            raise StateError(
                f"another writer changed the state at {self._where} at the same time "
                f"(journal entry {seq} was taken); plan again under the lock"
            )
        fold(doc, entry)
        self._journal.append((key, len(body)))
        return doc

    @contextmanager
    def _changing(self) -> Iterator[Document]:
        with self._mutex:
            yield self._current()

    def write_resource(self, record: ResourceRecord, *, expected_lineage: str) -> int:
        fields = record_fields(record)
        with self._changing() as doc:
            if doc["lineage"] != expected_lineage:
                raise LineageMismatch(expected_lineage, doc["lineage"], hint="plan again")
            return int(self._append("write", record=fields, serial=doc["serial"] + 1)["serial"])

    def delete_resource(self, address: str, *, expected_lineage: str) -> int:
        with self._changing() as doc:
            if doc["lineage"] != expected_lineage:
                raise LineageMismatch(expected_lineage, doc["lineage"], hint="plan again")
            if address not in doc["resources"]:
                raise ResourceNotFound(address)
            return int(self._append("delete", address=address, serial=doc["serial"] + 1)["serial"])

    def replace_all(self, snapshot: StateSnapshot, *, force: bool = False) -> int:
        resources = {r.address: record_fields(r) for r in snapshot}
        intents = {a: asdict(i) for a, i in snapshot.intents.items()}
        with self._changing() as doc:
            if snapshot.lineage != doc["lineage"] and not force:
                raise LineageMismatch(snapshot.lineage, doc["lineage"], hint="force it")
            if snapshot.serial < doc["serial"] and not force:
                raise SerialConflict(snapshot.serial, doc["serial"])
            serial = int(max(doc["serial"], snapshot.serial)) + 1
            if serial > MAX_SERIAL:
                raise StateError(f"the serial would pass {MAX_SERIAL}; refusing to push")
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
            doc = self._doc if self._doc is not None else self._refresh()
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
                raise StateError(
                    f"a state exists at {self._where} already; refusing to overwrite it"
                )
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

    def compact(self, *, always: bool = False) -> None:
        """Fold the journal into a new snapshot when it is worth it (or ``always``)."""
        with self._mutex:
            if self._doc is None or not self._journal:
                return
            journal_bytes = sum(size for _, size in self._journal)
            if (
                not always
                and journal_bytes * 4 < self._snapshot_bytes
                and len(self._journal) < 1000
            ):
                return
            key = f"{self._base(self._doc['lineage'])}/snapshot.json"
            body = self._dump(self._doc)
            self._fence()
            etag = self._s3.put(key, body, if_match=self._snapshot_etag)
            if etag is None:
                raise StateError(f"the snapshot {key} changed underneath this writer")
            folded = [k for k, _ in self._journal]
            self._snapshot_etag, self._snapshot_bytes, self._journal = etag, len(body), []
            self._s3.delete(folded)

    # -- control-plane objects ------------------------------------------------------------

    def _objects(self) -> dict[str, dict[str, Any]]:
        with self._mutex:
            doc = self._doc if self._doc is not None else self._refresh()
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
            doc = self._doc if self._doc is not None else self._refresh()
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
            doc = self._doc if self._doc is not None else self._refresh()
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
