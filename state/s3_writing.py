"""Writing the S3 state: a new lineage directory and the head that points at it, one journal
entry a change (If-None-Match: * on its key, so one writer only), and folding the journal into
a new snapshot (If-Match on the snapshot). A lock holder renews its lease before each write.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from state.errors import WRITE_AGAIN, StateError
from state.s3_journal import Document, empty_document, fold
from state.s3_reading import LAYOUT_VERSION, S3Reading

__all__ = ["S3Writing"]


class S3Writing(S3Reading):
    """The writes every change of the S3 backend is made of."""

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
        self._created()

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
        doc = self._cached()
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
                f"(journal entry {seq} was taken); {WRITE_AGAIN}"
            )
        fold(doc, entry)
        self._journal.append((key, len(body)))
        return doc

    @contextmanager
    def _changing(self) -> Iterator[Document]:
        with self._mutex:
            yield self._current()

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
