"""Job rows decoded once: the loop reads every active job each cycle, and on a deep queue
almost all of them are as they were the cycle before. A row read again with the same content
(every column, and the capacity it holds) gets the record decoded from it before, instead of
being checked and decoded again (some 20-40 us a row).

The typed-column checks still hold for every row read: a row is looked up only after its
columns' types pass (`sound_types`: a REAL where an INTEGER belongs never matches the row
it equals), and what remains of the checks (ranges, NaN, known
statuses, parsable JSON) depends on the values alone, which a hit has exactly as before (NaN
equals nothing, so a row holding one is always checked, and refused, again)."""

from __future__ import annotations

from typing import Any

from reconciler.scheduler.amounts import Amounts
from reconciler.scheduler.sqlite_rows import record_of, sound_types
from reconciler.scheduler.store import JobRecord

GENERATION = 40_000  # rows kept per generation: two generations bound what is kept


class DecodedRows:
    """A store's decoded rows by content, in two generations: a row found in the older one
    moves to the newer; when the newer is full, the older is dropped (rows not read for a
    generation: jobs that ended, or rows since changed)."""

    def __init__(self, generation: int = GENERATION) -> None:
        self._generation = generation
        self._new: dict[tuple[Any, ...], JobRecord] = {}
        self._old: dict[tuple[Any, ...], JobRecord] = {}

    def record(self, row: tuple[Any, ...], amounts: Amounts) -> JobRecord:
        if not sound_types(row, amounts):
            return record_of(row, amounts)  # refused, naming the column
        key = (row, amounts)
        found = self._new.get(key)
        if found is not None:
            return found
        found = self._old.pop(key, None)
        if found is None:
            found = record_of(row, amounts)
        if len(self._new) >= self._generation:
            self._old, self._new = self._new, {}
        self._new[key] = found
        return found
