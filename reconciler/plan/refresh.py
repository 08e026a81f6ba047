"""Refresh: what the provider reports, matched against what state records. Pure.

Everything poolform creates is tagged with the state's lineage, so one batched `list` shows
all of it. Three findings feed the plan:
- missing: recorded, but nothing with its ids exists any more -> recreate;
- adoptable: not recorded, but carrying the idempotency token of a recorded intent (an apply
  died between the provider call and the state write) -> the create is re-run with that token
  and returns the existing resource;
- orphans: tagged with this lineage, matching no record and no intent (e.g. the half-made copy
  of an interrupted replacement) -> deleted, so nothing is left running unaccounted for.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from providers.protocol import TAG_TOKEN, Observed
from state import StateSnapshot


@dataclass(frozen=True)
class RefreshResult:
    missing: frozenset[str] = frozenset()
    adoptable: frozenset[str] = frozenset()
    orphans: tuple[Observed, ...] = ()


def _same(observed: Observed, recorded_ids: dict[str, str]) -> bool:
    return any(recorded_ids.get(key) == value for key, value in observed.provider_ids.items())


def match_observed(snapshot: StateSnapshot, observed: Iterable[Observed]) -> RefreshResult:
    by_address: dict[str, list[Observed]] = {}
    for item in observed:
        by_address.setdefault(item.address, []).append(item)
    missing: set[str] = set()
    adoptable: set[str] = set()
    orphans: list[Observed] = []
    for record in snapshot:
        if not any(_same(o, dict(record.provider_ids)) for o in by_address.get(record.address, ())):
            missing.add(record.address)
    for address, items in sorted(by_address.items()):
        recorded = snapshot.get(address)
        intent = snapshot.intents.get(address)
        for item in items:
            if recorded is not None and _same(item, dict(recorded.provider_ids)):
                continue
            if intent is not None and item.tags.get(TAG_TOKEN) == intent.token:
                adoptable.add(address)
                continue
            orphans.append(item)
    return RefreshResult(frozenset(missing), frozenset(adoptable), tuple(orphans))
