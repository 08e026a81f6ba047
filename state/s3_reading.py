"""The S3 state as this process reads it: the head, the snapshot and the journal after it,
folded into one cached document, which a read brings up to date from S3 (a lock holder's
writes keep it current themselves).

The layout of the objects is told in ``state.s3``; the lease in ``state.s3_lease``.
"""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from state.errors import LineageMismatch, StateDamaged, StateMoved
from state.fresh import FreshState
from state.locking import Clock, Sleep
from state.model import HistoryEntry, StateSnapshot
from state.s3_journal import Document, fold, history_of, snapshot_of
from state.s3_lease import Lease, S3Calls
from state.s3_objects import S3Objects
from state.store_base import StoreBase
from state.threads import leave_signals_to_the_main_thread

__all__ = ["LAYOUT_VERSION", "S3Reading"]

LAYOUT_VERSION = 1
_UNLOCKED_READS = 3  # tries of a read without the lock that meets a journal being folded


class S3Reading(StoreBase):
    """The reading half of the S3 backend, and the cache the writing half keeps current."""

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
        with ThreadPoolExecutor(
            max_workers=min(8, len(keys)), initializer=leave_signals_to_the_main_thread
        ) as pool:
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

    def _cached(self) -> Document | None:
        """The cached document, or S3's when none is cached (None: no state here yet)."""
        return self._doc if self._doc is not None else self._refresh()

    def exists(self) -> bool:
        with self._mutex:
            return self._doc is not None or self._refresh() is not None

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
            doc = self._cached()
            if doc is None:
                return self._salt_before_state(lineage)
            if doc["lineage"] != lineage:
                raise LineageMismatch(lineage, doc["lineage"])
            return str(doc["salt"])
