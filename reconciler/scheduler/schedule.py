"""`schedule(snapshot, now) -> Decisions`: one decision cycle, a pure function.

The cycle runs in numbered phases, as Kueue's does, but admits everything that fits from one
snapshot instead of one head per queue:

1. Routes: resolve every queued job against the applied configuration; a job no route could
   ever hold is rejected (after an apply made it impossible, the reason says so); a job whose
   route an apply moved to another pool is reported with the pool it waits for now.
2. Ledger: account what running, admitted and stopping jobs hold.
3. Order: jobs room is held for first (jobs passed too often, then claimants, whose victims
   are exiting), then priority (higher first), then submission time, then id, so the same
   snapshot always gives the same decisions.
4. Admit: each job in order takes the first route that fits now, accounted at once so the
   next job sees it. A job that fits nowhere looks for a minimal set of victims; if it finds
   one it claims the capacity they hold. A job passed by too many admissions has what is free
   of its demand held for it (see starvation.py).
5. Reasons: every job left queued gets a reason computed in this cycle.

What keeps a deep queue cheap without changing any decision (see admission.py): outcomes are
reused while the ledger they depend on stands (a job like one that just failed fails the same
way), and a tree of pools that nothing queued can enter any more, nor free by preemption, is
known as such, so the rest of its queue only needs reasons.
"""

from __future__ import annotations

import gc
from dataclasses import replace
from operator import attrgetter, itemgetter

from reconciler.scheduler.admission import Admission, Lane, Waiting
from reconciler.scheduler.amounts import Amounts
from reconciler.scheduler.candidates import Candidates, victim_order
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import (
    Decisions,
    Holding,
    JobRequest,
    Queued,
    Reject,
    Route,
    Snapshot,
)
from reconciler.scheduler.reasons import BYPASSED, Reason
from reconciler.scheduler.routing import resolve
from reconciler.scheduler.usage import PolicyUse, PoolUse, TreeUse
from reconciler.scheduler.waiting import explain_failure

__all__ = ["explain_failure", "schedule", "where_they_run"]


def schedule(snapshot: Snapshot, now: float) -> Decisions:
    """A cycle allocates many small objects and frees them by reference counting; the cyclic
    collector, set off by the allocations, would walk the whole snapshot again and again
    (about half a busy cycle's time, measured), so it is off while the cycle runs. At the end
    only the young generation (what the cycle made and returns) is collected: re-enabled with
    the allocation count high, the collector would set off at once and could cascade into a
    pass over every older object of the process (65 ms on the bench's heap, measured, a third
    of a busy cycle), work that belongs to the process, not to this decision. The older
    generations are left to the caller's next automatic collection."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _schedule(snapshot, now)
    finally:
        if was_enabled:
            gc.collect(0)
            gc.enable()


def _schedule(snapshot: Snapshot, now: float) -> Decisions:
    snapshot = where_they_run(snapshot)
    config = snapshot.config
    # 2. Ledger (first: phase 1 looks its entries up once per distinct set of routes).
    ledger = Ledger(config, snapshot.holding)
    # 1. Routes.
    moves: dict[int, str] = {}
    priorities: dict[int, int] = {}
    rejects, waiting = _routes(snapshot, ledger, now, moves, priorities)
    candidates, outstanding = _candidates(snapshot, ledger)
    # 3. Order: jobs passed too often, claimants, the rest; then priority, submission, id.
    waiting = _in_order(waiting)
    # 4. Admit (or preempt), and 5. reasons.
    admission = Admission(snapshot, ledger, candidates, outstanding, now)
    admission.run(waiting)
    bypassed = admission.bypasses.counts()
    _carry_bypass_counts(snapshot, admission.reasons, bypassed)
    return Decisions(
        cycle=snapshot.cycle,
        serial=config.serial,
        admits=tuple(admission.admits),
        preempts=tuple(admission.preempts),
        rejects=tuple(sorted(rejects, key=lambda r: r.job)),
        reasons=admission.reasons,
        claims=admission.claims,
        bypassed=bypassed,
        moves=moves,
        priorities=priorities,
    )


def where_they_run(snapshot: Snapshot) -> Snapshot:
    """Held jobs whose policy an apply has since moved to another pool hold what they hold
    of the pool they run in, under no policy of it, as jobs of a removed policy do: the
    policy's limit and reservation are of its new pool, which they do not use (Kueue's
    quota is per ClusterQueue), and `pools status` shows them there so. Counted under the
    policy, they would keep its jobs out of the new pool while it stands idle."""
    policies = snapshot.config.policies
    moved = False
    for held in snapshot.holding:
        policy = policies.get(held.policy)
        if policy is not None and policy.pool != held.pool:
            moved = True
            break
    if not moved:
        return snapshot
    holding = []
    for held in snapshot.holding:
        policy = policies.get(held.policy)
        if policy is not None and policy.pool != held.pool:
            # No policy is named so ('@' is in no name): an entry of its own in the ledger.
            held = replace(held, policy=f"{held.policy}@{held.pool}")
        holding.append(held)
    return replace(snapshot, holding=tuple(holding))


def _candidates(
    snapshot: Snapshot, ledger: Ledger
) -> tuple[dict[int, Candidates], dict[int, list[int]]]:
    """Per tree, its would-be victims (preemptible, not stopping) in victim order; per waiter,
    the jobs being stopped for it."""
    by_pool: dict[str, list[Holding]] = {}
    outstanding: dict[int, list[int]] = {}
    for held in _in_victim_order(snapshot.holding):
        if held.stopping:
            if held.preempted_for is not None:
                outstanding.setdefault(held.preempted_for, []).append(held.id)
        elif held.preemptible:
            found = by_pool.get(held.pool)
            if found is None:
                by_pool[held.pool] = [held]
            else:
                found.append(held)
    ranked: dict[int, tuple[TreeUse, list[Holding]]] = {}
    pools = ledger.pools
    for name, jobs in by_pool.items():
        use = pools.get(name)
        if use is None:
            continue
        tree = use.tree
        shared = ranked.get(id(tree))
        if shared is None:
            ranked[id(tree)] = (tree, jobs)
        else:  # pools sharing a tree: their jobs in one victim order (a total order)
            shared[1].extend(jobs)
            shared[1].sort(key=victim_order)
    candidates = {key: Candidates(ledger, jobs, tree) for key, (tree, jobs) in ranked.items()}
    return candidates, outstanding


def _in_victim_order(holding: tuple[Holding, ...]) -> list[Holding]:
    """Sorted by `victim_order` (lowest priority, then most recently admitted, then highest
    id), as three stable sorts on one field each, least significant first: no Python call
    per job."""
    ordered = sorted(holding, key=attrgetter("id"), reverse=True)
    ordered.sort(key=attrgetter("admitted_at"), reverse=True)
    ordered.sort(key=attrgetter("priority"))
    return ordered


def _carry_bypass_counts(
    snapshot: Snapshot, reasons: dict[int, Reason], changed: dict[int, int]
) -> None:
    """A waiting job's bypass count rides in its reason, which the store keeps from cycle to
    cycle (`snapshot_of` reads it back): the bound holds across cycles and restarts."""
    for job_id, count in changed.items():  # counts this cycle moved
        why = reasons.get(job_id)
        if count and why is not None:
            reasons[job_id] = Reason(why.code, {**why.detail, BYPASSED: count})
    for job in snapshot.queued:  # counts as stored
        if job.bypassed and job.id not in changed:
            why = reasons.get(job.id)
            if why is not None:
                reasons[job.id] = Reason(why.code, {**why.detail, BYPASSED: job.bypassed})


# A route set's lanes, form, rank, routes and first (pool, priority), made once per cycle.
_Compiled = tuple[tuple[Lane, ...], int, int, tuple[Route, ...], tuple[str, int]]


def _routes(
    snapshot: Snapshot,
    ledger: Ledger,
    now: float,
    moves: dict[int, str],
    priorities: dict[int, int],
) -> tuple[list[Reject], list[Waiting]]:
    """Every queued job's lanes (or its rejection), with its place in the order. A batch's
    ranks share one request object: the next rank reuses what the one before it found, any
    other job looks its request up by value (its hash is kept, and the lookup finds the very
    object first when the configuration saw it before).

    `moves` gets each routed job whose stored pool none of its routes names any more (an
    apply moved its policy, or removed that pool of several): the first route's pool, as
    submit names it. A job that still routes to its stored pool, among others, keeps it.
    `priorities` gets each whose stored priority is not its first route's, which orders it."""
    config = snapshot.config
    resolved = config.resolved  # per configuration: the same request always routes the same
    forms = config.forms
    when = f" since the apply of state serial {config.serial}"
    compiled: dict[int, _Compiled] = {}
    entries = _Entries(ledger)
    noted: set[int] = set()
    demands: set[tuple[int, Amounts]] = set()  # (tree, demand) noted
    rejects: list[Reject] = []
    waiting: list[Waiting] = []
    append = waiting.append
    max_bypass = snapshot.max_bypass
    # The run of alike jobs being gathered: what they share, and its last id.
    run: list[Queued] | None = None  # the last entry's run, once it has one
    run_request: JobRequest | None = None
    run_batch, run_at, run_bypassed, run_last = 0, 0.0, 0, 0
    last_request: JobRequest | None = None
    found: _Compiled | Reason | None = None
    named: tuple[Route, ...] = ()  # the last routed entry's routes
    # And the first one's (pool, priority): most jobs' stored pair is equal, one compare.
    first: tuple[str, int] = ("", 0)
    for job in snapshot.queued:
        request: JobRequest = job.request
        if (
            request is run_request
            and job.batch == run_batch
            and job.submitted_at == run_at
            and job.bypassed == run_bypassed
            and job.id > run_last
            and (job.claim_until is None or job.claim_until <= now)
        ):
            # Alike the run's first (the last entry), which room is not held for either.
            routed = job.routed
            if routed != first and routed is not None:
                _changed(job.id, routed, named, first, moves, priorities)
            if run is not None:
                run.append(job)
            else:  # the run's first list (most jobs have none: an empty tuple until then)
                run = [job]
                waiting[-1] = (*waiting[-1][:8], run)
            run_last = job.id
            continue
        if request is not last_request:  # a batch's ranks follow one another
            last_request = request
            entry = resolved.get(request)
            if entry is None:
                routes = resolve(request, config, when=when)
                if isinstance(routes, Reason):
                    entry = routes
                else:
                    form = tuple((r.pool, r.policy, r.demand) for r in routes)
                    entry = (routes, forms.setdefault(form, len(forms)))
                resolved[request] = entry
            if isinstance(entry, Reason):
                found = entry
            else:
                routes, shape = entry
                found = compiled.get(id(routes))
                if found is None:
                    lanes = entries.lanes(routes)
                    found = compiled[id(routes)] = (
                        lanes,
                        shape,
                        -routes[0].priority,
                        routes,
                        (routes[0].pool, routes[0].priority),
                    )
                    if shape not in noted:  # the same form notes the same
                        noted.add(shape)
                        _note_trees(lanes, demands)
        if isinstance(found, Reason):
            rejects.append(Reject(job.id, found))
            continue
        assert found is not None
        lanes, shape, rank, named, first = found
        routed = job.routed
        if routed != first and routed is not None:
            _changed(job.id, routed, named, first, moves, priorities)
        claim_until = job.claim_until
        claimant = claim_until is not None and claim_until > now
        # Room is held for it: passed too often (first: that room was held before any claim
        # made since could be, so a claimant never takes it back the next cycle), or a
        # claimant; then everything else.
        bypassed = job.bypassed
        starving = bypassed >= max_bypass
        run = None
        at, job_id, batch = job.submitted_at, job.id, job.batch
        if starving or claimant:
            place = 0 if starving else 1
            run_request = None
        else:
            place = 2
            run_request = request
        append((place, rank, at, job_id, job, lanes, shape, claimant, ()))
        run_batch, run_at, run_bypassed, run_last = batch, at, bypassed, job_id
    return rejects, waiting


def _changed(
    job: int,
    routed: tuple[str, int | None],
    routes: tuple[Route, ...],
    first: tuple[str, int],
    moves: dict[int, str],
    priorities: dict[int, int],
) -> None:
    """Notes what an apply changed of a job's stored route: its pool, when none of its routes
    is through it any more, and its priority, when its first route orders it by another."""
    pool, priority = routed
    if pool != first[0] and _left(pool, routes):
        moves[job] = first[0]
    if priority is not None and priority != first[1]:
        priorities[job] = first[1]


def _left(pool: str, routes: tuple[Route, ...]) -> bool:
    """Whether none of the routes is through the pool (its job's route moved away from it)."""
    return all(route.pool != pool for route in routes)


class _Entries:
    """The ledger entries of each (pool, policy) a route names, looked up once per cycle."""

    def __init__(self, ledger: Ledger):
        self.pools, self.policies = ledger.pools, ledger.policies
        self.found: dict[tuple[str, str], tuple[PoolUse, PolicyUse, TreeUse]] = {}

    def lanes(self, routes: tuple[Route, ...]) -> tuple[Lane, ...]:
        if len(routes) == 1:  # (most jobs)
            return (self.lane(routes[0]),)
        return tuple([self.lane(route) for route in routes])

    def lane(self, route: Route) -> Lane:
        entry = self.found.get((route.pool, route.policy))
        if entry is None:
            pool = self.pools[route.pool]
            entry = self.found[route.pool, route.policy] = (
                pool,
                self.policies[route.policy],
                pool.tree,
            )
        # Made as the tuple it is: a lane per distinct request, and the named tuple's own
        # constructor is a Python function in between.
        return _new(Lane, (route, *entry))


def _in_order(waiting: list[Waiting]) -> list[Waiting]:
    """Sorted by place in the order. A run of alike jobs is sorted as one entry, its first
    job's place, when no other job falls between its first and last (they share everything
    the order looks at but the id, which only grows along the run); else every job alone."""
    _sort(waiting)
    if not any(map(_RUN, waiting)):  # no run of alike jobs: every entry is one job already
        return waiting
    previous: Waiting | None = None
    for entry in waiting:
        if (
            previous is not None
            and previous[8]
            and entry[:3] == previous[:3]
            and entry[3] < previous[8][-1].id
        ):
            return _one_by_one(waiting)
        previous = entry
    return waiting


_RUN = itemgetter(8)
_new = tuple.__new__


def _sort(waiting: list[Waiting]) -> None:
    """By (place, rank, submitted at, id), as four stable sorts on one plain field each, least
    significant first (ids are unique: the same order as sorting by the four together), which
    compare numbers instead of tuples."""
    for field in (3, 2, 1, 0):
        waiting.sort(key=itemgetter(field))


def _one_by_one(waiting: list[Waiting]) -> list[Waiting]:
    alone: list[Waiting] = []
    for place, rank, at, job_id, job, lanes, shape, claimant, run in waiting:
        alone.append((place, rank, at, job_id, job, lanes, shape, claimant, ()))
        for member in run:
            alone.append((place, rank, at, member.id, member, lanes, shape, claimant, ()))
    _sort(alone)
    return alone


def _note_trees(lanes: tuple[Lane, ...], seen: set[tuple[int, Amounts]]) -> None:
    """Keep, per tree, the least demand every queued job makes of it (keys all of them ask
    for), and whether a job could go elsewhere too. A demand a tree has seen already leaves
    its floor as it is (`seen`: many forms share a few demands)."""
    for lane in lanes:
        tree = lane.tree
        if len(lanes) > 1:
            tree.mixed = True
        demand = lane.route.demand
        noted = (id(tree), demand)
        if noted in seen:
            continue
        seen.add(noted)
        floor = tree.floor
        if floor is None:
            tree.floor = dict(demand)
            continue
        shared = 0  # keys of the floor this demand asks for too (a demand's keys are unique)
        for key, need in demand:
            least = floor.get(key)
            if least is not None:
                shared += 1
                if need < least:
                    floor[key] = need
        if shared < len(floor):  # the floor keeps only keys every job asks for
            asked = {key for key, _ in demand}
            for key in [key for key in floor if key not in asked]:
                del floor[key]
