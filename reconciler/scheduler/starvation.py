"""Bounded bypass: a queued job that capacity keeps passing by gets capacity held for it.

A job that does not fit its pool is *passed* by every admission onto the same tree of pools
(the pool and those it shares capacity with) of a job after it in the cycle's order: equal or
lower priority, since the order puts higher priority first. Once it has been passed `limit`
times (in this cycle and earlier ones: the count is kept in the store), what is free of its
demand is held for it, as for a preemptor, so later jobs only take what lies outside the held
amount (Slurm's backfill, without time limits) and its count stops growing.

Counting is by differences of a per-tree admission counter, so a deep queue costs a heap
push per waiting job, not a visit per admission.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Sequence

from reconciler.scheduler.model import Route
from reconciler.scheduler.usage import TreeUse

Routes = Sequence[tuple[Route, TreeUse]]


class _Watched:
    """Jobs passed alike: the same trees, the same count so far, watched at the same point of
    the cycle (no admission onto those trees in between), so their counts move together and
    they reach the bound together. `members`: groups of jobs with the routes to hold room on
    for each, in the order they were watched."""

    __slots__ = ("base", "final", "members", "starts")

    def __init__(self, job: int, base: int, routes: Routes):
        self.members: list[tuple[Routes, list[int]]] = [(routes, [job])]
        self.base = base  # passed this many times before this cycle
        self.starts: dict[int, int] = {}  # id(tree) -> its counter when the job failed there
        self.final: int | None = None  # its count once capacity is held for it


class Bypasses:
    def __init__(self, limit: int, hold: Callable[[int, Route], None]):
        self.limit = max(limit, 0)
        self._hold = hold
        self._counter: dict[int, int] = {}  # id(tree) -> admissions this cycle
        self._waiting: dict[int, list[tuple[int, int, _Watched]]] = {}  # id(tree) -> heap
        self._watched: list[_Watched] = []
        self._last: _Watched | None = None  # where the job watched last went
        # Per tree: its entry pushed last, when one of jobs on that tree alone. A job watched
        # there with the same count, before any admission onto the tree, joins it: nothing
        # was pushed onto the tree's heap in between, so it would be taken off the heap right
        # after that entry, at the same count, as its own entry would.
        self._tail: dict[int, _Watched] = {}
        self._pushes = itertools.count()

    def watch(self, job: int, base: int, routes: Routes) -> None:
        """A job that failed for lack of capacity on these routes; holds at once when it has
        been passed enough already."""
        last = self._last
        if (
            last is not None
            and last.members[-1][0] is routes
            and last.base == base
            and last.final is None
            and base < self.limit
            and self._unpassed(last)
        ):
            last.members[-1][1].append(job)
            return
        counters, waiting = self._counter, self._waiting
        if len(routes) == 1 and base < self.limit:  # one tree (most jobs): `_push` inlined
            key = id(routes[0][1])
            counter = counters.get(key, 0)
            tail = self._tail.get(key)
            if (
                tail is not None
                and tail.base == base
                and tail.final is None
                and tail.starts[key] == counter
            ):
                tail.members.append((routes, [job]))
                self._last = tail
                return
            watched = self._last = self._tail[key] = _Watched(job, base, routes)
            self._watched.append(watched)
            watched.starts[key] = counter
            heap = waiting.get(key)
            if heap is None:
                heap = waiting[key] = []
            # Nothing has passed it yet in this cycle: its count is `base`.
            threshold = counter + self.limit - base
            heapq.heappush(heap, (threshold, next(self._pushes), watched))
            return
        watched = self._last = _Watched(job, base, routes)
        self._watched.append(watched)
        if base >= self.limit:
            self._hold_for(watched)
            return
        starts, tails = watched.starts, self._tail
        for _, tree in routes:
            key = id(tree)
            starts[key] = counters.get(key, 0)
            tails.pop(key, None)  # pushed onto its heap: nothing joins an entry before it
        remaining = 1 if len(starts) > 1 else max(self.limit - base, 1)
        for key, counter in starts.items():
            self._push(key, counter + remaining, watched)

    def _unpassed(self, watched: _Watched) -> bool:
        """Whether nothing was admitted onto its trees since it was watched."""
        counters = self._counter
        for key, start in watched.starts.items():  # noqa: SIM110 (a loop: no generator on a hot path)
            if counters.get(key, 0) != start:
                return False
        return True

    def also(self, jobs: list[int]) -> None:
        """Jobs passed exactly as the one watched last (the same routes and count, no
        admission in between): they join that entry."""
        assert self._last is not None
        self._last.members[-1][1].extend(jobs)

    def admitted(self, tree: TreeUse) -> None:
        """An admission onto `tree`: it passes every job watched there."""
        key = id(tree)
        counter = self._counter[key] = self._counter.get(key, 0) + 1
        heap = self._waiting.get(key)
        while heap and heap[0][0] <= counter:
            _, _, watched = heapq.heappop(heap)
            if watched.final is not None:
                continue
            if self.count(watched) >= self.limit:
                self._hold_for(watched)
            else:
                self._push(key, counter + self._remaining(watched), watched)

    def counts(self) -> dict[int, int]:
        """Each watched job's count where this cycle changed it."""
        changed: dict[int, int] = {}
        counters = self._counter
        for watched in self._watched:  # (`count`, inlined: once per watched job)
            count = watched.final
            if count is None:
                count = watched.base
                for key, start in watched.starts.items():
                    count += counters.get(key, 0) - start
            if count != watched.base:
                for _, jobs in watched.members:
                    for job in jobs:
                        changed[job] = count
        return changed

    def count(self, watched: _Watched) -> int:
        if watched.final is not None:
            return watched.final
        counters, count = self._counter, watched.base
        for key, start in watched.starts.items():
            count += counters.get(key, 0) - start
        return count

    def _remaining(self, watched: _Watched) -> int:
        # With several trees the count may also grow elsewhere: look again at each admission.
        if len(watched.starts) > 1:
            return 1
        return max(self.limit - self.count(watched), 1)

    def _push(self, key: int, threshold: int, watched: _Watched) -> None:
        heap = self._waiting.setdefault(key, [])
        heapq.heappush(heap, (threshold, next(self._pushes), watched))

    def _hold_for(self, watched: _Watched) -> None:
        # Its count stops here: what passes it from now on lies outside what is held.
        watched.final = self.count(watched)
        for routes, jobs in watched.members:
            for job in jobs:
                for route, _ in routes:
                    self._hold(job, route)
