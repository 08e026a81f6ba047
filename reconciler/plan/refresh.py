"""Refresh: what the provider reports, matched against what state records. Pure.

Everything poolform creates is tagged with the state's lineage, so one batched `list` shows
all of it. Three findings feed the plan:
- missing: recorded, but nothing with its ids exists any more -> recreate;
- adoptable: not recorded, but carrying the idempotency token of a recorded intent (an apply
  died between the provider call and the state write) -> the create is re-run with that token
  and returns the existing resource;
- orphans: tagged with this lineage, matching no record and no intent (e.g. the half-made copy
  of an interrupted replacement, or the launch template left of a group deleted by hand) ->
  deleted, so nothing is left running unaccounted for.
Drift (attributes changed behind poolform's back) is found from the same read, by the refresh
step in reconciler/drift/refresh.py, which builds on this matching.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from providers.protocol import TAG_TOKEN, Observed
from state import StateSnapshot


@dataclass(frozen=True)
class RefreshResult:
    missing: frozenset[str] = frozenset()
    adoptable: frozenset[str] = frozenset()
    orphans: tuple[Observed, ...] = ()
    observed: tuple[Observed, ...] = ()  # what the provider reported


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
    adoptable: set[str] = set()
    orphans: list[Observed] = []
    for record in snapshot:
        found = by_address.get(record.address, ())
        if not any(is_same_resource(record.provider_ids, o) for o in found):
            missing.add(record.address)
    for address, items in sorted(by_address.items()):
        recorded = snapshot.get(address)
        intent = snapshot.intents.get(address)
        for item in items:
            if recorded is not None and is_same_resource(recorded.provider_ids, item):
                continue
            if intent is not None and item.tags.get(TAG_TOKEN) == intent.token:
                adoptable.add(address)
                continue
            orphans.append(item)
    return RefreshResult(
        frozenset(missing), frozenset(adoptable), tuple(orphans), observed=tuple(observed)
    )


def is_left_behind(snapshot: StateSnapshot, orphan: Observed) -> bool:
    """Part of a recorded resource that the resource no longer uses: the launch template of a
    group deleted by hand, or the recorded template after someone swapped the group's."""
    record = snapshot.get(orphan.address)
    return record is not None and any(
        record.provider_ids.get(key) == value for key, value in orphan.provider_ids.items()
    )
