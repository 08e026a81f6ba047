"""What a saved plan re-reads before it is applied, and the check that nothing it touches moved.

At plan time every object a change touches is fingerprinted: its ids and the attributes the
configuration owns (a count the scheduler moves is left out, so scheduling between plan and
apply does not void the plan). Applying the saved plan reads only those objects, by id, in one
batched call, and refuses the plan when a fingerprint differs: applying steps computed against
a reality that has since changed would undo someone's change without anyone reviewing it.
The same reads rebuild the refresh the plan was computed from (reconciler/drift/refresh.py), so
the re-plan that proves the steps were not edited needs no full listing either. Pure.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from providers.observable import INFORMATIONAL_KEYS, SCHEDULER_KEYS
from providers.protocol import TAG_TOKEN, Observed, ResourceRef
from reconciler.errors import PoolformError
from reconciler.plan.model import ChangeKey, Plan
from reconciler.plan.refresh import RefreshResult, is_left_behind, is_same_resource
from state import StateSnapshot

ABSENT = "absent"


@dataclass(frozen=True)
class Reread:
    """For each change (by its key): what to read back and the fingerprint it had when the plan
    was made."""

    refs: Mapping[ChangeKey, ResourceRef]
    fingerprints: Mapping[ChangeKey, str]

    def to_json(self) -> list[dict[str, object]]:
        return [
            {
                "key": str(key),
                "address": ref.address,
                "resource_type": ref.resource_type,
                "provider_ids": dict(ref.provider_ids),
                "fingerprint": self.fingerprints[key],
            }
            for key, ref in sorted(self.refs.items(), key=lambda item: str(item[0]))
        ]

    @classmethod
    def from_json(cls, data: list[dict[str, object]]) -> Reread:
        refs: dict[ChangeKey, ResourceRef] = {}
        prints: dict[ChangeKey, str] = {}
        for item in data:
            address, ids = str(item["address"]), item["provider_ids"]
            assert isinstance(ids, dict)
            text = str(item["key"])
            key = ChangeKey(address) if text == address else ChangeKey.from_text(text, ids)
            refs[key] = ResourceRef(address, str(item["resource_type"]), {**ids})
            prints[key] = str(item["fingerprint"])
        return cls(refs, prints)


def fingerprint(observed: Observed | None, salt: str) -> str:
    if observed is None:
        return ABSENT
    owned = {
        k: v
        for k, v in observed.attributes.items()
        if k not in SCHEDULER_KEYS and k not in INFORMATIONAL_KEYS
    }
    body = json.dumps(
        [dict(observed.provider_ids), owned], sort_keys=True, separators=(",", ":"), default=str
    )
    return hashlib.sha256(f"{salt}\0{body}".encode()).hexdigest()


ByAddress = dict[str, list[Observed]]


def _by_address(observed: Iterable[Observed]) -> ByAddress:
    """What was observed, by address: a plan looks up every resource it touches (a scan per
    lookup made a 10,000-resource plan with 1,000 changes spend most of a second here)."""
    index: ByAddress = {}
    for o in observed:
        index.setdefault(o.address, []).append(o)
    return index


def _find(ref: ResourceRef, observed: ByAddress) -> Observed | None:
    return next(
        (o for o in observed.get(ref.address, ()) if is_same_resource(ref.provider_ids, o)),
        None,
    )


def plan_rereads(plan: Plan, snapshot: StateSnapshot, refresh: RefreshResult, salt: str) -> Reread:
    refs: dict[ChangeKey, ResourceRef] = {}
    observed = _by_address(refresh.observed)
    for change in plan.changes:
        if change.cleanup_ids is not None:
            refs[change.key] = ResourceRef(change.address, change.resource_type, change.cleanup_ids)
            continue
        record = snapshot.get(change.address)
        if record is not None:
            refs[change.key] = ResourceRef(
                record.address, record.resource_type, record.provider_ids
            )
            continue
        intent = snapshot.intents.get(change.address)
        made = (
            None
            if intent is None
            else next(
                (
                    o
                    for o in observed.get(change.address, ())
                    if o.tags.get(TAG_TOKEN) == intent.token
                ),
                None,
            )
        )
        if made is not None:  # adopted: read back what the interrupted apply made
            refs[change.key] = ResourceRef(made.address, made.resource_type, made.provider_ids)
    for orphan in refresh.orphans:  # reported unrecorded ones: the re-plan reports them too
        if is_left_behind(snapshot, orphan):
            continue  # a cleanup: read back above
        refs.setdefault(
            ChangeKey.of_copy(orphan.address, orphan.provider_ids),
            ResourceRef(orphan.address, orphan.resource_type, orphan.provider_ids),
        )
        record = snapshot.get(orphan.address)
        if record is not None:
            refs.setdefault(
                ChangeKey(record.address),
                ResourceRef(record.address, record.resource_type, record.provider_ids),
            )
    prints = {key: fingerprint(_find(ref, observed), salt) for key, ref in refs.items()}
    return Reread(refs, prints)


def check_rereads(saved: Reread, observed: list[Observed], salt: str) -> None:
    index = _by_address(observed)
    moved = [
        key
        for key, ref in saved.refs.items()
        if fingerprint(_find(ref, index), salt) != saved.fingerprints[key]
    ]
    if moved:
        shown = ", ".join(sorted(map(str, moved))[:5]) + (" ..." if len(moved) > 5 else "")
        raise PoolformError(
            f"{len(moved)} resource(s) this plan touches changed since it was made: {shown}; "
            "nothing was applied, re-plan",
            hint="run `poolform drift` to see what changed, then `poolform plan -out FILE` again",
        )
