"""Refresh: what the provider reports, matched against what state records. Pure.

Everything poolform creates is tagged with the state's lineage, so one batched `list` shows
all of it. What the plan learns from it:
- missing: recorded, but nothing with its ids exists any more -> recreate;
- half-made: not the recorded resource, but carrying the idempotency token of a recorded intent:
  an apply died between the provider call and the state write. Intents are recorded before a
  create or replace and cleared by the write that records its result, so a token that matches
  one proves the copy was made by the interrupted call: the plan adopts it (the create or
  replace is re-run with that token, and the provider returns or finishes what it made) or,
  when the address is no longer created or replaced, deletes it;
- orphans: tagged with this lineage, matching no record and no intent. Part of a recorded
  resource that it no longer uses (the launch template of a group deleted by hand) is deleted;
  anything else (a resource `state rm` forgot, a copy whose proof is gone) is only reported,
  with the `poolform import` that takes it back: nothing proves an apply made it, so nothing
  deletes it;
- shortfalls: a recorded group running fewer instances than it wants. A cloud's group heals
  itself; one that cannot (`heals: false`) is brought back by the plan.
Drift (attributes changed behind poolform's back) is found from the same read, by the refresh
step in reconciler/drift/refresh.py, which builds on this matching.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from providers.protocol import TAG_TOKEN, Observed
from state import StateSnapshot


@dataclass(frozen=True)
class Shortfall:
    running: int
    desired: int
    heals: bool  # the cloud brings the group back by itself


@dataclass(frozen=True)
class RefreshResult:
    missing: frozenset[str] = frozenset()
    adoptable: frozenset[str] = frozenset()  # addresses with a half-made copy
    orphans: tuple[Observed, ...] = ()  # tagged, matching no record and no intent
    observed: tuple[Observed, ...] = ()  # what the provider reported
    half_made: tuple[Observed, ...] = ()  # carrying the token of a recorded intent
    shortfalls: Mapping[str, Shortfall] = field(default_factory=dict)


def is_same_resource(recorded_ids: Mapping[str, str], observed: Observed) -> bool:
    """Whether `observed` is the recorded resource. An instance group is its group: a launch
    template whose group was deleted is what is left of it, not the resource."""
    if "group" in recorded_ids:
        return observed.provider_ids.get("group") == recorded_ids["group"]
    return any(recorded_ids.get(key) == value for key, value in observed.provider_ids.items())


def match_observed(snapshot: StateSnapshot, observed: Iterable[Observed]) -> RefreshResult:
    observed = list(observed)
    by_address: dict[str, list[Observed]] = {}
    for item in observed:
        by_address.setdefault(item.address, []).append(item)
    missing: set[str] = set()
    half_made: list[Observed] = []
    orphans: list[Observed] = []
    shortfalls: dict[str, Shortfall] = {}
    for record in snapshot:
        found = [
            o
            for o in by_address.get(record.address, ())
            if is_same_resource(record.provider_ids, o)
        ]
        if not found:
            missing.add(record.address)
        elif (short := shortfall_of(found[0])) is not None:
            shortfalls[record.address] = short
    for address, items in sorted(by_address.items()):
        recorded = snapshot.get(address)
        intent = snapshot.intents.get(address)
        for item in items:
            if recorded is not None and is_same_resource(recorded.provider_ids, item):
                continue
            if intent is not None and item.tags.get(TAG_TOKEN) == intent.token:
                half_made.append(item)
                continue
            orphans.append(item)
    return RefreshResult(
        frozenset(missing),
        frozenset(o.address for o in half_made),
        tuple(orphans),
        observed=tuple(observed),
        half_made=tuple(half_made),
        shortfalls=shortfalls,
    )


def shortfall_of(observed: Observed) -> Shortfall | None:
    attributes = observed.attributes
    running, desired = attributes.get("running"), attributes.get("desired")
    if not isinstance(running, int) or not isinstance(desired, int) or running >= desired:
        return None
    return Shortfall(running, desired, heals=attributes.get("heals", True) is not False)


def is_left_behind(snapshot: StateSnapshot, orphan: Observed) -> bool:
    """Part of a recorded resource that the resource no longer uses: the launch template of a
    group deleted by hand, or the recorded template after someone swapped the group's."""
    record = snapshot.get(orphan.address)
    return record is not None and any(
        record.provider_ids.get(key) == value for key, value in orphan.provider_ids.items()
    )


def recorded_elsewhere(snapshot: StateSnapshot, orphan: Observed) -> str | None:
    """The address of another record whose ids name `orphan` (tagged for its own address):
    the two records' ids were swapped or edited by hand."""
    for record in snapshot:
        if record.address != orphan.address and is_same_resource(record.provider_ids, orphan):
            return record.address
    return None


def named_by_record(
    refresh: RefreshResult, snapshot: StateSnapshot, address: str
) -> Observed | None:
    """The object of this state, tagged for another address, that `address`'s record names."""
    record = snapshot.get(address)
    if record is None:
        return None
    return next(
        (
            o
            for o in refresh.orphans
            if o.address != address and is_same_resource(record.provider_ids, o)
        ),
        None,
    )


def shown_ids(observed: Observed) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(observed.provider_ids.items()))


def import_hint(orphan: Observed, snapshot: StateSnapshot | None = None) -> str:
    """How to take an unrecorded resource back under management (or why it cannot be)."""
    other = None if snapshot is None else recorded_elsewhere(snapshot, orphan)
    if other is not None:
        return (
            f"its ids are recorded for {other} (were the records' ids swapped or edited by "
            f"hand?): `poolform state rm {other}`, then import each object at its own address"
        )
    ids = orphan.provider_ids
    key = "group" if "group" in ids else "object" if "object" in ids else None
    if key is None:
        shown = ", ".join(f"{k} {v}" for k, v in sorted(ids.items()))
        return f"nothing uses {shown} and it cannot be imported: delete it in the cloud if unused"
    return f"take it back under management with: poolform import {orphan.address} {ids[key]}"


def unrecorded_notice(orphan: Observed, snapshot: StateSnapshot | None = None) -> str:
    """The plan's one-line report of a resource no record accounts for (never deleted)."""
    return (
        f"warning: {orphan.address} ({shown_ids(orphan)}) carries this state's tags but no "
        f"record accounts for it; poolform leaves it alone: {import_hint(orphan, snapshot)}"
    )
