"""Phases 4 and 5 of `schedule`: each queued job in order is admitted, preempts, or waits with
a reason; all of it against one ledger, updated as the cycle decides.

Three things keep a deep queue cheap, none of which changes a decision:
- a job like one that just failed (same routes, demand, preemptibility and batch rule, no
  higher priority) fails the same way while the trees it could use have not changed since:
  fits do not depend on priority, and a lower priority finds no more victims;
- a tree that no queued job fits any more (free capacity below what each of them asks of a
  key all of them ask for) and where no victim is left that a later job could take by
  priority is *closed*: later jobs there (lower priority, in order) only get their reason,
  unless one could take capacity back (reclaim), which is checked per job;
- reasons are computed once per tree version and what they depend on.

The base classes hold the rest, apart for size: reasons per tree version and closed trees
(closed_trees.py), the victim search and what it remembers (victim_search.py), and room held
for claimants and for jobs passed too often, and when it is given up (held_room.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from reconciler.scheduler.candidates import Candidates
from reconciler.scheduler.closed_trees import ClosedTrees
from reconciler.scheduler.fit import fits, free_worker
from reconciler.scheduler.held_room import Heads, HeldRoom
from reconciler.scheduler.lanes import Lane, Waiting
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import Admit, Holding, JobRequest, Preempt, Queued, Route, Snapshot
from reconciler.scheduler.reasons import Reason, ReasonCode, reason
from reconciler.scheduler.starvation import Bypasses
from reconciler.scheduler.usage import Failure, TreeUse
from reconciler.scheduler.victim_search import VictimSearch

Failed = dict[tuple[int, bool, int], tuple[object, int, Reason, list[tuple[Route, TreeUse]]]]


class Admission(ClosedTrees, VictimSearch, HeldRoom):
    def __init__(
        self,
        snapshot: Snapshot,
        ledger: Ledger,
        candidates: dict[int, Candidates],
        outstanding: dict[int, list[int]],
        now: float,
    ):
        self.snapshot, self.ledger, self.now = snapshot, ledger, now
        self.candidates, self.outstanding = candidates, outstanding
        self.admits: list[Admit] = []
        self.preempts: list[Preempt] = []
        self.reasons: dict[int, Reason] = {}
        self.claims: dict[int, float] = {}
        self.claimed_at: dict[int, float] = {}  # claimants room is held for: submission time
        self.latest_claim: dict[tuple[int, int], tuple[float, int]] = {}  # see `_behind`
        # Not a bound method of this object: a cycle's objects are freed by reference counting
        # as soon as it returns (a reference cycle would leave them all to the cyclic
        # collector, which then walks them: tens of milliseconds on a deep queue).
        self.readmitted: set[int] = set()  # admitted on a second look (`_retry_held_out`)
        # Jobs passed too often in this cycle, to hold room for (or admit) once the ledger is
        # whole again (see `_settle_heads`).
        self.heads = Heads()
        self.bypasses = Bypasses(snapshot.max_bypass, self.heads)
        self._settling = False
        self._releasing = False  # inside `_take_from_lower_claims`: holders are out
        self.batches = {held.batch for held in snapshot.holding}
        self.hopeless = {}  # per tree (see `Hopeless`)
        self._np: set[int] | None = None  # queued non-preemptible jobs, when first needed
        self._waiting: list[Waiting] = []
        self._index: dict[int, tuple[Queued, tuple[Lane, ...]]] | None = None
        self._retrying = False
        # Preemptible jobs admitted in this cycle, per tree: (job, route, batch).
        self.admitted: dict[int, list[tuple[int, Route, int]]] = {}
        self.failed: Failed = {}
        self._last: tuple[Reason, bool] = (reason(ReasonCode.PENDING_EVALUATION), False)
        limit = snapshot.max_running
        # Process slots left this cycle (None: unbounded). Stopping jobs still hold theirs; jobs
        # running at another place hold none of this machine's.
        local = len(snapshot.holding) - snapshot.remote
        self.slots = None if limit is None else limit - local
        self._full = None if limit is None else reason(ReasonCode.PROCESS_LIMIT, limit=limit)

    def run(self, waiting: list[Waiting]) -> None:
        self._waiting = waiting
        self._decide(waiting)

    def _decide(self, waiting: list[Waiting]) -> None:
        """Each job in order, and the rest of a run of alike jobs at once where the first one's
        outcome holds for them (the shortcut tests compare it with one job at a time)."""
        reasons, bypasses = self.reasons, self.bypasses
        # The last job's outcome when it only got a reason (nothing changed): a next job with
        # the same request, batch and count takes the same path to the same reason, so the
        # rest of a batch's ranks get it at once.
        last: JobRequest | None = None  # with the batch and count of that job
        last_of = (0, 0)
        for _, _, _, _, job, lanes, shape, claimant, run in waiting:
            if job.request is last and not claimant and last_of == (job.batch, job.bypassed):
                alike: Sequence[Queued] = (job, *run) if run else (job,)
            else:
                outcome = self._step(job, lanes, shape, claimant)
                last = None if outcome is None else job.request
                last_of = (job.batch, job.bypassed)
                alike = ()
                if run:
                    for position, member in enumerate(run):  # each alike the job before it
                        if last is not None:
                            alike = run[position:]
                            break
                        outcome = self._step(member, lanes, shape, claimant)
                        last = None if outcome is None else member.request
            if alike:
                why, watched = self._last
                for member in alike:
                    reasons[member.id] = why
                if watched:
                    bypasses.also([member.id for member in alike])

    def _step(
        self, job: Queued, lanes: tuple[Lane, ...], shape: int, claimant: bool
    ) -> Reason | None:
        """Admit, preempt for, or explain one job. Returns its reason when that is all it got
        (nothing changed: the next alike job takes the same path), after keeping it, and
        whether it is watched for bypass, in `_last`."""
        reasons, limit = self.reasons, self.bypasses.limit
        if self._full is not None and self.slots is not None and self.slots <= 0:
            # No job starts: nothing to place, preempt or hold for (a process slot is not
            # capacity a victim could give back; the next cycle finds the ones freed).
            why = reasons[job.id] = self._full
            self._last = (why, False)
            return why
        np = not job.request.preemptible
        if len(lanes) == 1:
            lane = lanes[0]
            tree = lane.tree
            if tree.dead == tree.version and not claimant and job.bypassed < limit:
                closed = self._closed(job, lane, np, shape)
                if closed is not None:
                    reasons[job.id] = closed
                    self._last = (closed, False)
                    return closed
            version: object = tree.version
        else:
            version = tuple(lane.tree.version for lane in lanes)
        priority = lanes[0].route.priority
        look_alike = (shape, np, job.batch if job.batch in self.batches else 0)
        seen = None if claimant or job.bypassed >= limit else self.failed.get(look_alike)
        if seen is not None and seen[0] == version and _same_outcome(seen, priority):
            why = reasons[job.id] = seen[2]
            self._last = (why, bool(seen[3]))
            if seen[3]:
                self.bypasses.watch(job.id, job.bypassed, seen[3])
                if self.heads.items:  # room held for it changes the tree: no reuse after it
                    self._settle_heads()
                    return None
            return why
        failures: list[tuple[Lane, Failure]] = []
        for lane in lanes:
            failure = fits(lane.pool, lane.policy, lane.route.demand, np)
            if failure is None:
                self._admit(job.id, lane, np, job.batch)
                return None
            failures.append((lane, failure))
        outcome = self._wait(job, failures, claimant, np)
        if outcome is not None:
            self.failed[look_alike] = (version, priority, *outcome)
        return None

    def _admit(self, job: int, lane: Lane, np: bool, batch: int) -> None:
        route, ledger = lane.route, self.ledger
        worker = free_worker(lane.pool)
        ledger.take(lane.pool, lane.policy, route.demand, np, worker)
        lane.tree.admitted.append((job, route.priority))
        if not np:
            self.admitted.setdefault(id(lane.tree), []).append((job, route, batch))
        if lane.tree.holds:
            self._unhold_bound(lane.tree, route.policy)
        self.admits.append(
            Admit(job, route.pool, route.policy, route.demand, route.priority, worker)
        )
        self.bypasses.admitted(lane.tree)
        if self.slots is not None:
            self.slots -= 1
        if self.heads.items and not self._releasing:
            self._settle_heads()

    def _wait(
        self, job: Queued, failures: list[tuple[Lane, Failure]], claimant: bool, np: bool
    ) -> tuple[Reason, list[tuple[Route, TreeUse]]] | None:
        """A job that fits nowhere: its victims, or its reason. Returns the outcome a look-alike
        may reuse (None when it may not)."""
        victims = self.outstanding.get(job.id) if claimant else None
        if victims:
            lane, failure = failures[0]
            self._hold(job, lane.route, failure)
            self.reasons[job.id] = reason(
                ReasonCode.WAITING_FOR_VICTIMS, victims=sorted(victims), pool=lane.route.pool
            )
            return None
        if len(failures) == 1:
            return self._wait_one(job, failures, claimant, np)
        found = self._victims(job, failures, np)
        # Rather than stop running work, take room held for lower-priority claimants; so too
        # when the only victims are jobs admitted in this cycle (never victims within it), as
        # the next cycle, which sees them running, would.
        if (
            found is not None or self._would_preempt_admitted(job, failures, np)
        ) and self._take_from_lower_claims(job, failures, np):
            return None
        if found is not None:
            preempted = self._preempt(job.id, *found)
            self.preempts.append(preempted)
            self.claims[job.id] = self.now + self.snapshot.claim_ttl
            for lane, failure in failures:  # noqa: B007 (the pair where the victims are)
                if lane.route.pool == preempted.pool:
                    break
            self._hold(job, lane.route, failure)
            self.reasons[job.id] = reason(
                ReasonCode.WAITING_FOR_VICTIMS,
                victims=list(preempted.victims),
                pool=preempted.pool,
            )
            return None
        lane, failure = failures[0]
        why = self.reasons[job.id] = self._explain(lane, failure)
        if claimant:
            self._hold(job, lane.route, failure)
            return None
        short = [(f[0].route, f[0].tree) for f in failures if f[1].level == "pool"]
        if short:
            self.bypasses.watch(job.id, job.bypassed, short)
            if self.heads.items:  # passed too often already: room is held for it now
                self._settle_heads()
        return why, short

    def _wait_one(
        self, job: Queued, failures: list[tuple[Lane, Failure]], claimant: bool, np: bool
    ) -> tuple[Reason, list[tuple[Route, TreeUse]]] | None:
        """`_wait` for a job with one route (most jobs): the same steps, each asked of that
        route alone, and the questions whose answer is known from the failure skipped (no
        victims where neither capacity nor the limit binds, no victims among this cycle's
        admissions in a tree that admitted none)."""
        lane, failure = failures[0]
        tree, level = lane.tree, failure.level
        found, candidates = None, None
        if level == "pool" or level == "limit":
            candidates = self.candidates.get(id(tree))
            if candidates is not None and candidates.jobs:
                found = self._search(job, lane, np, candidates)
        floor = tree.held_floor  # (no room held for a job of no higher priority: none to take)
        lower = floor is not None and floor <= lane.route.priority
        if found is not None:
            if lower and self._take_from_lower_claims(job, failures, np):
                return None
            assert candidates is not None  # (where the victims were found)
            preempted = self._preempt(job.id, lane, found, candidates)
            self.preempts.append(preempted)
            self.claims[job.id] = self.now + self.snapshot.claim_ttl
            self._hold(job, lane.route, failure)
            self.reasons[job.id] = reason(
                ReasonCode.WAITING_FOR_VICTIMS,
                victims=list(preempted.victims),
                pool=preempted.pool,
            )
            return None
        if (
            lower
            and level == "pool"
            and id(tree) in self.admitted  # (its lists only grow: in it, it is not empty)
            and self._would_preempt_admitted(job, failures, np)
            and self._take_from_lower_claims(job, failures, np)
        ):
            return None
        why = self.reasons[job.id] = self._explain(lane, failure)
        if claimant:
            self._hold(job, lane.route, failure)
            return None
        if level == "pool":
            short = [(lane.route, tree)]
            self.bypasses.watch(job.id, job.bypassed, short)
            if self.heads.items:  # passed too often already: room is held for it now
                self._settle_heads()
        else:
            short = []
        self._check_closed(lane, job, failure)
        return why, short

    def _hold(self, job: Queued, route: Route, failure: Failure) -> None:
        """Hold free capacity for a claimant only when capacity is what it lacks: a claimant
        stopped by its own policy's limit or reservation could not use it, and others could.
        Every claim is held here: its submission time is kept for `_behind`."""
        if failure.level == "pool":
            at = self.claimed_at[job.id] = job.submitted_at
            where = (id(self.ledger.pools[route.pool].tree), route.priority)
            latest = self.latest_claim.get(where)
            if latest is None or latest < (at, job.id):
                self.latest_claim[where] = (at, job.id)
            self.ledger.hold(job.id, route)


def _same_outcome(seen: tuple[object, int, Reason, object], priority: int) -> bool:
    """A look-alike's failure holds for this job: no higher priority (no more victims), and the
    same priority where a lower one could find higher-priority jobs ahead of it."""
    if seen[2].code in _BY_PRIORITY:
        return priority == seen[1]
    return priority <= seen[1]


# Reasons a lower priority could turn into "blocked by higher priority".
_BY_PRIORITY = frozenset(
    {
        ReasonCode.BLOCKED_BY_HIGHER_PRIORITY,
        ReasonCode.WAITING_FOR_CAPACITY,
        ReasonCode.NO_WORKER_FREE,
        ReasonCode.STEP_RUN_EXHAUSTED,
    }
)


__all__ = ["Admission", "Holding", "Lane", "Waiting"]
