"""What one cycle's ledger counts, per tree of pools, per pool and per policy (see ledger.py),
and why a route does not fit."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import NamedTuple

from reconciler.scheduler.amounts import Amounts
from reconciler.scheduler.model import Policy, Pool, Route

NO_LIMIT: dict[str, int] = {}  # an empty mapping shared, never written


class Failure(NamedTuple):
    """Why a route does not fit now. `level`: where the first binding limit is ("reserved",
    "limit", "pool", "overcommitted"); `deficit`: units missing per key at that level ("pool":
    in the tree of pools it shares capacity with)."""

    level: str
    deficit: tuple[tuple[str, int], ...]

    @property
    def keys(self) -> set[str]:
        return {k for k, _ in self.deficit}


class TreeUse:
    """Usage of one tree of pools (one pool, usually). `used` counts held capacity too."""

    __slots__ = (
        "admitted",
        "capacity",
        "checked",
        "claimed",
        "dead",
        "floor",
        "grown",
        "held_changes",
        "held_floor",
        "holder_seen",
        "holds",
        "joins",
        "lenders",
        "lending_changes",
        "memo",
        "memo_version",
        "mixed",
        "names",
        "start",
        "used",
        "version",
    )

    def __init__(self, names: tuple[str, ...], capacity: dict[str, int], used: dict[str, int]):
        self.names = names
        self.capacity = capacity
        self.used = used
        self.start: dict[str, int] = {}
        self.version = 0  # moves on every change: while it stands, every answer is the same
        self.claimed: dict[str, int] = defaultdict(int)
        # job -> (its route, a claim?, what is held for it), in the order capacity was held
        self.holds: dict[int, tuple[Route, bool, dict[str, int]]] = {}
        # The least priority of a job something is held for (None: nothing held), how often
        # holds changed, and `holder` as of a count of changes.
        self.held_floor: int | None = None
        self.held_changes = 0
        self.holder_seen: tuple[int, tuple[int, bool] | None] = (-1, None)
        self.admitted: list[tuple[int, int]] = []  # this cycle: (job, priority)
        # Policies (False) and pools (True) with jobs here, in order: those that stopped
        # borrowing (victims taken), that started to (admissions), and that grew while they
        # borrow (admissions: they may now give up by priority jobs they could not before).
        self.lenders: list[tuple[bool, str]] = []
        self.joins: list[tuple[bool, str]] = []
        self.grown: list[tuple[bool, str]] = []
        self.lending_changes = 0  # moves with any of the three lists
        # For `schedule`: the least any queued job asks of a key every one of them asks for;
        # whether some job may use another tree too; the version last looked at and the one
        # at which nothing queued can get in any more; outcomes at `memo_version`.
        self.floor: dict[str, int] | None = None
        self.mixed = False
        self.checked = -1
        self.dead = -1
        self.memo: dict[object, object] = {}
        self.memo_version = -1

    @property
    def holder(self) -> tuple[int, bool] | None:
        """The first job capacity is held for, and whether for a claim."""
        seen, found = self.holder_seen
        if seen == self.held_changes:
            return found
        found = None
        for job, (_, claim, amounts) in self.holds.items():
            if any(amounts.values()):
                found = (job, claim)
                break
        self.holder_seen = (self.held_changes, found)
        return found


class PoolUse:
    __slots__ = ("busy", "capacity", "pool", "tree", "used")

    def __init__(self, pool: Pool):
        self.pool = pool
        self.capacity: Mapping[str, int] = pool.capacity
        self.used: dict[str, int] = defaultdict(int)
        self.tree: TreeUse
        self.busy: set[str] = set()


class PolicyUse:
    __slots__ = ("claimed", "limit", "np_used", "policy", "reserved", "used")

    def __init__(self, policy: Policy):
        self.policy = policy
        self.used: dict[str, int] = defaultdict(int)
        self.np_used: dict[str, int] = defaultdict(int)
        # Per job of the policy whose victims are exiting (a claim): its priority and demand,
        # theirs once the victims are gone, so a reclaim by another of its jobs of no higher
        # priority counts them as used.
        self.claimed: dict[int, tuple[int, Amounts]] = {}
        # Typed as dicts: compiled by mypyc, a `Mapping`'s `get` is a method call by name.
        self.limit: dict[str, int] = _as_dict(policy.limit)
        self.reserved: dict[str, int] = _as_dict(policy.reserved)


def _as_dict(mapping: Mapping[str, int] | None) -> dict[str, int]:
    if mapping is None:
        return NO_LIMIT
    return mapping if isinstance(mapping, dict) else dict(mapping)
