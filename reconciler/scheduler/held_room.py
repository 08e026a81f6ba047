"""Room held for jobs (claimants whose victims are exiting, jobs passed too often) as the
admission phase keeps it: who gives held room up, to whom, and when a job passed earlier in
the cycle looks again. Each rule makes this cycle decide what the next one would, so no
decision waits a cycle for nothing:

- a job that becomes passed too often mid-cycle is offered room held for jobs the next cycle
  orders after it (`_settle_heads`);
- room held for a job its own policy's limit or reservation now holds back is freed, and
  jobs already passed that waited only for held room look again (`_unhold_bound`,
  `_retry_held_out`);
- a job about to preempt that fits in room held for lower-priority jobs takes that room
  instead of stopping running work (`_take_from_lower_claims`, `_would_preempt_admitted`).

`HeldRoom` is a part of `Admission` (its base class), kept apart for size: it works on the
admission's ledger, reasons and waiting jobs, declared here.
"""

from __future__ import annotations

from reconciler.scheduler.candidates import Candidates, victim_order
from reconciler.scheduler.fit import fits
from reconciler.scheduler.lanes import Lane, Waiting
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Holding, Queued, Route, Snapshot
from reconciler.scheduler.preemption import victims_among
from reconciler.scheduler.reasons import Reason, ReasonCode
from reconciler.scheduler.starvation import Bypasses
from reconciler.scheduler.usage import Failure, TreeUse


class HeldRoom:
    snapshot: Snapshot
    ledger: Ledger
    now: float
    candidates: dict[int, Candidates]
    reasons: dict[int, Reason]
    claimed_at: dict[int, float]  # per claimant room is held for, its submission time
    # Per (tree, priority): the latest (submission time, id) of a claim held there this cycle.
    latest_claim: dict[tuple[int, int], tuple[float, int]]
    readmitted: set[int]
    heads: Heads
    bypasses: Bypasses
    slots: int | None
    admitted: dict[int, list[tuple[int, Route, int]]]
    _settling: bool
    _releasing: bool
    _retrying: bool
    _np: set[int] | None
    _waiting: list[Waiting]
    _index: dict[int, tuple[Queued, tuple[Lane, ...]]] | None

    def _admit(self, job: int, lane: Lane, np: bool, batch: int) -> None:
        raise NotImplementedError  # Admission's

    def _settle_heads(self) -> None:
        """Jobs that became passed too often in this cycle go, the next cycle, before every
        job room is held for that it orders after them (lower priority, or claimants): room
        held for those is theirs first. Each is admitted if that room (and what is free) fits
        it, else what it lacks is held for it, and then for the others again, in order."""
        if self._settling:
            return
        self._settling = True
        try:
            heads = self.heads.items
            while heads:
                job_id, route = heads.pop(0)
                self._settle_head(job_id, route)
        finally:
            self._settling = False

    def _settle_head(self, job_id: int, route: Route) -> None:
        found = self._queued_by_id().get(job_id)
        if job_id in self.readmitted or found is None:
            return
        job, lanes = found
        lane = next((lane for lane in lanes if lane.route is route), None)
        if lane is None:
            return
        ledger, np, tree = self.ledger, not job.request.preemptible, lane.tree
        failure = ledger.check(route, np)
        if failure is not None and failure.level != "pool":
            return  # its own policy binds: held room would idle (the next cycle holds none)
        mine = self._next_order(job, route.priority, claim=False)
        behind = [
            holder
            for holder, (held, claim, amounts) in tree.holds.items()
            if holder != job_id and any(amounts.values()) and self._after(holder, held, claim, mine)
        ]
        if failure is not None and not (behind and ledger.fits_without_claims(route, np, behind)):
            released = [(holder, *ledger.release(tree, holder)) for holder in behind]
            ledger.hold(job_id, route, claim=False)
            for holder, held, claim in sorted(released, key=self._holder_order):
                ledger.hold(holder, held, claim)
            return
        if self.slots is not None and self.slots <= 0:
            return  # no process slot left (`--max-running`)
        released = [(holder, *ledger.release(tree, holder)) for holder in behind]
        for other in lanes:  # what is held for it already, on any of its routes' trees
            if job_id in other.tree.holds:
                ledger.release(other.tree, job_id)
        self.reasons.pop(job_id, None)
        self.readmitted.add(job_id)
        self._releasing = True
        try:
            self._admit(job_id, lane, np, job.batch)
        finally:
            self._releasing = False
        for holder, held, claim in sorted(released, key=self._holder_order):
            ledger.hold(holder, held, claim)

    def _unhold_bound(self, tree: TreeUse, policy: str) -> None:
        """Room is held only for a job that lacks room (see `_hold`, `_settle_head`): after an
        admission to its own policy, a job whose policy's limit or reservation now binds
        could not use it, and its room is freed, as the next cycle would not hold it."""
        held = [(job, route) for job, (route, _, _) in tree.holds.items() if route.policy == policy]
        if not held:
            return
        if self._np is None:
            self._np = {q.id for q in self.snapshot.queued if not q.request.preemptible}
        freed = False
        for job, route in held:
            failure = self.ledger.check(route, job in self._np)
            if failure is not None and failure.level in ("limit", "reserved"):
                self.ledger.release(tree, job)
                freed = True
        if freed and not self._retrying:
            self._retry_held_out(tree)

    def _retry_held_out(self, tree: TreeUse) -> None:
        """Jobs already passed in this cycle that waited only for room held for others (their
        reason says so) look again once held room is freed, in their order, as the next
        cycle would: with their own held room released first, and held again if they still
        do not fit."""
        index = self._queued_by_id()
        ledger, names = self.ledger, set(tree.names)
        self._retrying = True
        try:
            again = True
            while again:  # an admission may free more room (see `_unhold_bound`)
                again = False
                for job_id, why in list(self.reasons.items()):
                    if self.slots is not None and self.slots <= 0:
                        return  # no process slot left this cycle (`--max-running`)
                    if why.code not in _HELD_OUT or why.detail.get("pool") not in names:
                        continue
                    found = index.get(job_id)
                    if found is None or self.reasons.get(job_id) is not why:
                        continue
                    job, lanes = found
                    own = [  # what is held for it, on any of its routes' trees
                        (lane.tree, *ledger.release(lane.tree, job_id))
                        for lane in lanes
                        if job_id in lane.tree.holds
                    ]
                    np = not job.request.preemptible
                    for lane in lanes:
                        if fits(lane.pool, lane.policy, lane.route.demand, np) is None:
                            del self.reasons[job_id]
                            self.readmitted.add(job_id)  # still watched for bypass: no hold
                            self._admit(job_id, lane, np, job.batch)
                            again = True
                            break
                    else:
                        for _, route, claim in own:
                            ledger.hold(job_id, route, claim)
        finally:
            self._retrying = False

    def _take_from_lower_claims(
        self, job: Queued, failures: list[tuple[Lane, Failure]], np: bool
    ) -> bool:
        """A job about to preempt that would fit in room held for jobs of lower priority
        (claimants, or jobs passed too often) takes that room instead: it would become a
        claimant itself and go before them (so the next cycle would admit it there anyway),
        and no running job is stopped for it. Those it passes keep what is still free."""
        ledger = self.ledger
        for lane, failure in failures:
            if failure.level != "pool" or not self._held_room_might_fit(lane, failure):
                continue
            lower = self._behind(job, lane)
            if not lower or not ledger.fits_without_claims(lane.route, np, lower):
                continue
            released = [(holder, *ledger.release(lane.tree, holder)) for holder in lower]
            self._releasing = True
            try:
                self._admit(job.id, lane, np, job.batch)
            finally:
                self._releasing = False
            for holder, route, claim in sorted(released, key=lambda r: -r[1].priority):
                ledger.hold(holder, route, claim)
            self._unhold_bound(lane.tree, lane.route.policy)
            if self.heads.items:
                self._settle_heads()
            return True
        return False

    def _held_room_might_fit(self, lane: Lane, failure: Failure) -> bool:
        """Whether room is held in the lane's tree for a job of no higher priority, and the
        route would fit were all room held there free: the cheap test before `_behind`.
        `failure` is the route's as the ledger stands, of level "pool": nothing else binds
        (no limit, reservation or overcommitted key), so the route fits with the held room
        free exactly when what is held covers the deficit on every key short."""
        tree = lane.tree
        floor = tree.held_floor
        if floor is None or floor > lane.route.priority:
            return False
        claimed = tree.claimed
        for key, short in failure.deficit:  # noqa: SIM110 (a loop: no generator on a hot path)
            if claimed.get(key, 0) < short:
                return False
        return True

    def _behind(self, job: Queued, lane: Lane) -> list[int]:
        """Jobs room is held for in the lane's tree that the job, were it a claimant, would go
        before: of lower priority (claimants, or jobs passed too often), or claimants of the
        same priority submitted after it."""
        lower = self.ledger.lower_claims(lane.route)
        priority, mine = lane.route.priority, (job.submitted_at, job.id)
        latest = self.latest_claim.get((id(lane.tree), priority))
        if latest is None or latest <= mine:
            return lower  # no claimant of its priority there was submitted after it
        claimed_at = self.claimed_at  # (kept where claims are held: no index of the queue)
        for holder, (route, claim, amounts) in lane.tree.holds.items():
            if claim and route.priority == priority and any(amounts.values()):
                at = claimed_at.get(holder)
                if at is not None and (at, holder) > mine:
                    lower.append(holder)
        return lower

    def _next_order(self, job: Queued, priority: int, claim: bool) -> tuple[int, int, float, int]:
        """A job's place in the next cycle's order (see `queue_routes`), were room still
        held for it then: passed too often first, then claimants."""
        place = 1 if claim and job.bypassed < self.bypasses.limit else 0
        return (place, -priority, job.submitted_at, job.id)

    def _after(
        self, holder: int, route: Route, claim: bool, mine: tuple[int, int, float, int]
    ) -> bool:
        found = self._queued_by_id().get(holder)
        return found is not None and self._next_order(found[0], route.priority, claim) > mine

    def _holder_order(self, held: tuple[int, Route, bool]) -> tuple[int, int, float, int]:
        holder, route, claim = held
        found = self._queued_by_id().get(holder)
        if found is None:
            return (2, -route.priority, 0.0, holder)
        return self._next_order(found[0], route.priority, claim)

    def _queued_by_id(self) -> dict[int, tuple[Queued, tuple[Lane, ...]]]:
        """Every waiting job (runs of alike jobs included) and its lanes, made when first
        needed (only the rare second looks need it)."""
        if self._index is None:
            self._index = {}
            for _, _, _, _, job, lanes, _, _, run in self._waiting:
                for member in (job, *run):
                    self._index[member.id] = (member, lanes)
        return self._index

    def _would_preempt_admitted(
        self, job: Queued, failures: list[tuple[Lane, Failure]], np: bool
    ) -> bool:
        """Whether the job, which found no victims, would find some were the preemptible jobs
        admitted in this cycle running: asked only where room is held for lower-priority jobs
        that the job would fit in (rare), so the search is a fresh one."""
        ledger = self.ledger
        for lane, failure in failures:
            admitted = self.admitted.get(id(lane.tree))
            if (
                failure.level != "pool"
                or not admitted
                or not self._held_room_might_fit(lane, failure)
            ):
                continue
            route = lane.route
            lower = self._behind(job, lane)
            if not lower or not ledger.fits_without_claims(route, np, lower):
                continue
            kept = self.candidates.get(id(lane.tree))
            ranked = [
                Holding(held, r.pool, r.policy, r.demand, r.priority, True, self.now, batch=batch)
                for held, r, batch in admitted
            ]
            ranked += kept.jobs if kept is not None else ()
            ranked.sort(key=victim_order)
            found = Candidates(ledger, ranked, lane.tree)
            if victims_among(ledger, route, np, job.batch, found) is not None:
                return True
        return False


class Heads:
    """Jobs that became passed too often, with the route to hold room on, as `Bypasses`
    reports them (mid-admission: `Admission._settle_heads` takes them once the ledger is whole).
    Not a bound method of the `Admission`: see its constructor. A class of its own, not a list
    subclass: mypyc can compile it (bench/compiled_cycle.py; measured, not adopted: see
    bench/README.md, Scheduler)."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[tuple[int, Route]] = []

    def __call__(self, job: int, route: Route) -> None:
        self.items.append((job, route))


# Reasons of a job that fits but for room held for others.
_HELD_OUT = frozenset({ReasonCode.RESERVED_FOR_HEAD, ReasonCode.RESERVED_FOR_PREEMPTOR})

__all__ = ["HeldRoom"]
