"""Job rows decoded once: the loop reads every active job each cycle, and on a deep queue
most of them are as they were the cycle before. A row read again with the same content (every
column, and the capacity it holds) gets the record decoded from it before, instead of being
checked and decoded again (some 20-40 us a row).

What is kept is exactly the rows of the last whole read of the active jobs (the loop's read,
each cycle): so it never holds more than the queue, and a job that ended or a row that changed
is gone after the next whole read. Other reads only look rows up.

The typed-column checks still hold for every row read: a row is looked up only after its
columns' types pass (`sound_types`: a REAL where an INTEGER belongs never matches the row it
equals), and what remains of the checks (ranges, NaN, known statuses, parsable JSON) depends
on the values alone, which a row found has exactly as the row it was decoded from (NaN equals
nothing, so a row holding one is always checked, and refused, again)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reconciler.scheduler.sqlite_rows import record_of, sound_types
from reconciler.scheduler.store import JobRecord

Held = Mapping[int, Sequence[tuple[str, int]]]  # job id -> the (key, amount) it holds


class DecodedRows:
    def __init__(self) -> None:
        self._kept: dict[tuple[Any, ...], JobRecord] = {}

    def records(
        self, rows: Sequence[tuple[Any, ...]], held: Held, *, whole: bool = False
    ) -> list[JobRecord]:
        """The rows' records, in order; `whole`: these are every active job's rows, and what
        is kept from now on."""
        kept = self._kept
        keep: dict[tuple[Any, ...], JobRecord] = {}
        records: list[JobRecord] = []
        for row in rows:
            amounts = tuple(sorted(held.get(row[0], ())))
            if not sound_types(row, amounts):
                records.append(record_of(row, amounts))  # refused, naming the column
                continue
            key = (row, amounts)
            record = kept.get(key)
            if record is None:
                record = record_of(row, amounts)
            if whole:
                keep[key] = record
            records.append(record)
        if whole:
            self._kept = keep
        return records
