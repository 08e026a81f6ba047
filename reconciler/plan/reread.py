"""What a saved plan re-reads before it is applied, and the check that nothing it touches moved.

At plan time every object a change touches is fingerprinted: its ids and the attributes the
configuration owns (a count the scheduler moves is left out, so scheduling between plan and
apply does not void the plan). Applying the saved plan reads only those objects, by id, in one
batched call, and refuses the plan when a fingerprint differs: applying steps computed against
a reality that has since changed would undo someone's change without anyone reviewing it.
The same reads rebuild the refresh the plan was computed from, so the re-plan that proves the
steps were not edited needs no full listing either. Pure.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace

from providers.observable import INFORMATIONAL_KEYS, SCHEDULER_KEYS
from providers.protocol import TAG_TOKEN, Observed, ResourceRef
from reconciler.drift.compare import detect_drift
from reconciler.errors import PoolformError
from reconciler.plan.model import Plan
from reconciler.plan.refresh import RefreshResult, is_same_resource, match_observed
from state import StateSnapshot

ABSENT = "absent"


@dataclass(frozen=True)
class Reread:
    """For each change key (an address, or `address#ids` for a cleanup): what to read back and
    the fingerprint it had when the plan was made."""

    refs: Mapping[str, ResourceRef]
    fingerprints: Mapping[str, str]

    def to_json(self) -> list[dict[str, object]]:
        return [
            {
                "key": key,
                "address": ref.address,
                "resource_type": ref.resource_type,
                "provider_ids": dict(ref.provider_ids),
                "fingerprint": self.fingerprints[key],
            }
            for key, ref in sorted(self.refs.items())
        ]

    @classmethod
    def from_json(cls, data: list[dict[str, object]]) -> Reread:
        refs, prints = {}, {}
        for item in data:
            key = str(item["key"])
            ids = item["provider_ids"]
            assert isinstance(ids, dict)
            refs[key] = ResourceRef(str(item["address"]), str(item["resource_type"]), {**ids})
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


def _find(ref: ResourceRef, observed: Iterable[Observed]) -> Observed | None:
    return next(
        (o for o in observed if o.address == ref.address and is_same_resource(ref.provider_ids, o)),
        None,
    )


def plan_rereads(plan: Plan, snapshot: StateSnapshot, refresh: RefreshResult, salt: str) -> Reread:
    refs: dict[str, ResourceRef] = {}
    for change in plan.changes:
        if change.cleanup_ids is not None:
            base = change.address.split("#", 1)[0]
            refs[change.address] = ResourceRef(base, change.resource_type, change.cleanup_ids)
            continue
        record = snapshot.get(change.address)
        if record is not None:
            refs[change.address] = ResourceRef(
                record.address, record.resource_type, record.provider_ids
            )
            continue
        intent = snapshot.intents.get(change.address)
        made = next(
            (
                o
                for o in refresh.observed
                if intent is not None
                and o.address == change.address
                and o.tags.get(TAG_TOKEN) == intent.token
            ),
            None,
        )
        if made is not None:  # adopted: read back what the interrupted apply made
            refs[change.address] = ResourceRef(made.address, made.resource_type, made.provider_ids)
    prints = {key: fingerprint(_find(ref, refresh.observed), salt) for key, ref in refs.items()}
    return Reread(refs, prints)


def check_rereads(saved: Reread, observed: list[Observed], salt: str) -> None:
    moved = [
        key
        for key, ref in saved.refs.items()
        if fingerprint(_find(ref, observed), salt) != saved.fingerprints[key]
    ]
    if moved:
        shown = ", ".join(sorted(moved)[:5]) + (" ..." if len(moved) > 5 else "")
        raise PoolformError(
            f"{len(moved)} resource(s) this plan touches changed since it was made: {shown}",
            hint="run `poolform drift` to see what changed, then `poolform plan -out FILE` again",
        )


def refresh_from_rereads(
    snapshot: StateSnapshot, saved: Reread, observed: list[Observed], salt: str
) -> RefreshResult:
    """The refresh a plan was made from, rebuilt from the objects it touches."""
    touched = {ref.address for ref in saved.refs.values()}
    sub = replace(
        snapshot,
        resources={a: r for a, r in snapshot.resources.items() if a in touched},
        intents={a: i for a, i in snapshot.intents.items() if a in touched},
    )
    matched = match_observed(sub, observed)
    return replace(matched, drift=detect_drift(sub, observed, salt, matched))
