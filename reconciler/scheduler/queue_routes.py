"""Phase 1 of `schedule`: every queued job resolved against the applied configuration, into
its lanes (its routes with the ledger entries they touch) and its place in the order, or its
rejection; alike jobs of one submission gathered into runs, and each tree's floor (the least
every queued job asks of it) noted for the closed-tree test of phase 4."""

from __future__ import annotations

from reconciler.scheduler.amounts import Amounts
from reconciler.scheduler.lanes import Lane, Waiting
from reconciler.scheduler.ledger import Ledger
from reconciler.scheduler.model import JobRequest, Queued, Reject, Route, Snapshot
from reconciler.scheduler.reasons import Reason
from reconciler.scheduler.routing import resolve
from reconciler.scheduler.usage import PolicyUse, PoolUse, TreeUse

__all__ = ["queue_routes"]

_new = tuple.__new__

# A route set's lanes, form, rank, routes and first (pool, priority), made once per cycle.
_Compiled = tuple[tuple[Lane, ...], int, int, tuple[Route, ...], tuple[str, int]]


def queue_routes(
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
