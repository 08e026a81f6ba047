"""The scheduler's data: the applied configuration it reads, the snapshot `schedule` decides
over, and the decisions it returns. Everything is frozen: a cycle decides over one immutable
picture, so the same snapshot always gives the same decisions."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

from reconciler.scheduler.amounts import Amounts
from reconciler.scheduler.reasons import Reason


class Status(enum.StrEnum):
    QUEUED = "queued"
    ADMITTED = "admitted"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    REJECTED = "rejected"


ACTIVE = (Status.QUEUED, Status.ADMITTED, Status.RUNNING)
HOLDING = (Status.ADMITTED, Status.RUNNING)  # jobs that hold capacity until they exit
TERMINAL = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED, Status.REJECTED)

PoolKind = Literal["resource", "worker", "machine"]


# -- the applied configuration -------------------------------------------------------------------


@dataclass(frozen=True)
class Policy:
    """A SubjectPolicy as applied. `limit` None or a missing key: bounded only by the pool.
    A pool without policies gets one implicit policy that reserves the whole pool."""

    name: str
    subject: str | None
    pool: str
    priority: int
    reserved: Mapping[str, int]
    limit: Mapping[str, int] | None
    may_preempt: bool = True
    implicit: bool = False


@dataclass(frozen=True)
class Worker:
    id: str
    directory: str | None  # where its jobs run (None: a worker this machine cannot reach)


@dataclass(frozen=True)
class WorkerShape:
    """What one worker of a worker pool offers a job."""

    gpus: int  # units
    gpu_types: tuple[str, ...]
    cpu: int | None  # units; None when unknown
    memory: int | None
    instance_type: str | None = None  # the cloud type its workers are (None: not known)
    spot: bool = False  # its workers are spot instances (resources.use_spot)


@dataclass(frozen=True)
class Pool:
    name: str
    kind: PoolKind
    capacity: Mapping[str, int]  # declared keys, in units; what admission may fill now
    policies: tuple[str, ...]
    gpu_types: tuple[str, ...] = ()  # machine pools: the machine types' GPU models
    worker_shape: WorkerShape | None = None
    declared_workers: int = 0  # worker pools: what apply was asked for (fail-fast uses it)
    workers: tuple[Worker, ...] = ()  # worker pools: the workers ready now
    parent: str | None = None  # resource pools: the pool it shares capacity with (a tree)
    # Machine pools: (instance type, spot) of each machine type, as its launch template says.
    machines: tuple[tuple[str, bool], ...] = ()


@dataclass(frozen=True)
class AppliedConfig:
    serial: int
    pools: Mapping[str, Pool]
    policies: Mapping[str, Policy]
    default_compute_pool: str | None = None
    default_aux_pool: str | None = None
    # What the scheduler works out once per configuration and keeps on it. Made empty here and
    # the indexes filled at first use, not `functools.cached_property`: mypyc can compile this
    # module (see bench/README.md, Scheduler), and a compiled class has no instance dict.
    # Requests already resolved against this configuration: their routes and the number of
    # their form (see `forms`), or their rejection.
    resolved: dict[JobRequest, tuple[tuple[Route, ...], int] | Reason] = field(
        init=False, repr=False, compare=False
    )
    # A number per form of routes (pools, policies and demand, not priority): requests of one
    # form are look-alikes to the scheduler.
    forms: dict[tuple[tuple[str, str, Amounts], ...], int] = field(
        init=False, repr=False, compare=False
    )
    # What routing works out once per (pool, policy) of this configuration.
    routing_cache: dict[tuple[str, ...], object] = field(init=False, repr=False, compare=False)
    _subjects: dict[str, list[Policy]] | None = field(init=False, repr=False, compare=False)
    _pools_of_subject: dict[str, frozenset[str]] | None = field(
        init=False, repr=False, compare=False
    )
    _trees: dict[str, tuple[str, ...]] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "resolved", {})
        object.__setattr__(self, "forms", {})
        object.__setattr__(self, "routing_cache", {})
        for name in ("_subjects", "_pools_of_subject", "_trees"):
            object.__setattr__(self, name, None)

    @property
    def _by_subject(self) -> dict[str, list[Policy]]:
        index = self._subjects
        if index is None:
            index = {}
            for policy in sorted(self.policies.values(), key=lambda p: (p.pool, p.name)):
                if policy.subject is not None:
                    index.setdefault(policy.subject, []).append(policy)
            object.__setattr__(self, "_subjects", index)
        return index

    @property
    def pools_of_subject(self) -> dict[str, frozenset[str]]:
        """Per subject, the pools one of whose policies names it."""
        found = self._pools_of_subject
        if found is None:
            index: dict[str, set[str]] = {}
            for pool in self.pools.values():
                for name in pool.policies:
                    policy = self.policies.get(name)
                    if policy is not None and policy.subject is not None:
                        index.setdefault(policy.subject, set()).add(pool.name)
            found = {subject: frozenset(names) for subject, names in index.items()}
            object.__setattr__(self, "_pools_of_subject", found)
        return found

    def policies_of_subject(self, subject: str) -> list[Policy]:
        return list(self._by_subject.get(subject, ()))

    @property
    def trees(self) -> dict[str, tuple[str, ...]]:
        """Pools sharing capacity through `parent`, by the name of their root: every pool is
        in exactly one tree (alone, usually)."""
        found = self._trees
        if found is None:
            members: dict[str, list[str]] = {}
            for name in sorted(self.pools):
                members.setdefault(self.root_of(name), []).append(name)
            found = {root: tuple(names) for root, names in members.items()}
            object.__setattr__(self, "_trees", found)
        return found

    def root_of(self, name: str) -> str:
        seen = {name}
        parent = self.pools[name].parent
        while parent is not None and parent in self.pools and parent not in seen:
            name = parent
            seen.add(name)
            parent = self.pools[name].parent
        return name

    def tree_of(self, name: str) -> tuple[str, ...]:
        return self.trees[self.root_of(name)]

    def tree_capacity(self, name: str) -> dict[str, int]:
        """What the tree a pool belongs to holds per key: what its jobs may borrow up to."""
        members = self.tree_of(name)
        if len(members) == 1:
            return dict(self.pools[name].capacity)
        total: dict[str, int] = {}
        for member in members:
            for key, value in self.pools[member].capacity.items():
                total[key] = total.get(key, 0) + value
        return total


# -- jobs ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JobRequest:
    """What a job asks for, before routing: a pool and/or subject, resources in units (gpu,
    cpu, memory, custom keys), acceptable GPU models (empty: any) and SkyPilot's instance_type
    and use_spot (None: any)."""

    pool: str | None = None
    subject: str | None = None
    resources: Amounts = ()
    accelerators: tuple[str, ...] = ()
    priority: int | None = None  # None: the policy's priority
    preemptible: bool = True
    instance_type: str | None = None
    use_spot: bool | None = None

    # Hashed once: a cycle looks every queued job's request up by value.
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        fields = (self.pool, self.subject, self.resources, self.accelerators, self.priority)
        placed = (self.preemptible, self.instance_type, self.use_spot)
        object.__setattr__(self, "_hash", hash((*fields, *placed)))

    def __hash__(self) -> int:
        return self._hash

    def gpus(self) -> int:
        return dict(self.resources).get("gpu", 0)


@dataclass(frozen=True)
class Route:
    """One way to run a job: a pool, the policy it is accounted to, and the job's demand there
    (with the implicit step_run, or one whole worker on a worker pool)."""

    pool: str
    policy: str
    demand: Amounts
    priority: int


@dataclass(frozen=True)
class Queued:
    id: int
    request: JobRequest
    submitted_at: float
    batch: int = 0
    claim_until: float | None = None  # it preempted others; their capacity is held for it
    reason: Reason | None = None  # as stored (the loop writes only what changed)
    bypassed: int = 0  # admissions that went past it while it waited (anti-starvation)
    pool: str | None = None  # as stored: the pool it was last routed to (None: not known)
    priority: int | None = None  # as stored: the priority it was last ordered by (None: not known)
    # (pool, priority) as stored, made once here: a cycle finds a job whose route an apply
    # changed by comparing it to its first route's, one compare for a job whose route stands.
    routed: tuple[str, int | None] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        routed = None if self.pool is None else (self.pool, self.priority)
        object.__setattr__(self, "routed", routed)


@dataclass(frozen=True)
class Holding:
    """A job holding capacity: admitted or running, until its process is seen to exit."""

    id: int
    pool: str
    policy: str
    amounts: Amounts
    priority: int
    preemptible: bool
    admitted_at: float
    batch: int = 0
    worker: str | None = None
    stopping: bool = False  # preempted or cancelled, not yet exited: still counted
    preempted_for: int | None = None


@dataclass(frozen=True)
class Snapshot:
    config: AppliedConfig
    queued: tuple[Queued, ...]
    holding: tuple[Holding, ...]
    cycle: int = 1
    claim_ttl: float = 120.0  # how long a preemptor keeps its claim on capacity
    max_bypass: int = 8  # admissions a job may be passed by before capacity is held for it
    # Jobs with a process at once, whatever the pools allow (the executor's own bound: local
    # processes share one machine's process table); None: no bound.
    max_running: int | None = None
    # Held jobs whose processes run at another place: no process slot of this machine.
    remote: int = 0


# -- decisions -----------------------------------------------------------------------------------


class Admit(NamedTuple):
    """A tuple, not a dataclass: a cycle over empty pools makes thousands of them."""

    job: int
    pool: str
    policy: str
    amounts: Amounts
    priority: int
    worker: str | None = None


@dataclass(frozen=True)
class Preempt:
    preemptor: int
    victims: tuple[int, ...]
    pool: str
    why: str  # "reclaim" (taking back reserved capacity) or "priority"


@dataclass(frozen=True)
class Reject:
    job: int
    reason: Reason


@dataclass(frozen=True)
class Decisions:
    cycle: int
    serial: int
    admits: tuple[Admit, ...] = ()
    preempts: tuple[Preempt, ...] = ()
    rejects: tuple[Reject, ...] = ()
    reasons: Mapping[int, Reason] = field(default_factory=dict)  # every job left queued
    claims: Mapping[int, float] = field(default_factory=dict)  # preemptor -> claim expiry
    bypassed: Mapping[int, int] = field(default_factory=dict)  # queued job -> its new count
    # Queued job -> the pool it routes to now, where an apply moved its route away from the
    # pool stored for it (its policy moved): the first of its routes, as at submit.
    moves: Mapping[int, str] = field(default_factory=dict)
    # Queued job -> the priority it is ordered by now (its first route's), where an apply
    # changed it from the one stored for it (its policy's priority changed, or it moved to a
    # policy of another). A job that gave its own priority at submit keeps it: its routes do.
    priorities: Mapping[int, int] = field(default_factory=dict)
