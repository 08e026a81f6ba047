"""detect_drift: recorded state + what the provider reports -> DriftReport. Pure.

Only real differences of managed resources are drift. Not drift:
- a count the scheduler moved inside the recorded bounds (the scheduler owns what runs now);
- cosmetic differences: `8` and `"8"`, `None` and `{}`, zones in another order, a machine type
  given as a URL, `spot` for `SPOT`, keys a cloud adds to the template data we passed through;
- an attribute the provider cannot read back (it is left out of `Observed.attributes`).
Sensitive values are compared by salted hash and never shown.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from providers.observable import (
    CONFIGURATION,
    INFORMATIONAL_KEYS,
    SCHEDULER_KEYS,
    expected_observation,
)
from providers.protocol import Observed, ProviderError
from reconciler.drift.model import (
    AttributeDrift,
    DriftReason,
    DriftReport,
    DriftStatus,
    Note,
    NoteCode,
    ResourceDrift,
    Unmanaged,
    text_of,
)
from reconciler.plan.expand import SENSITIVE_PREFIX, hash_secret
from reconciler.plan.refresh import (
    RefreshResult,
    import_hint,
    is_left_behind,
    is_same_resource,
    match_observed,
    named_by_record,
    shown_ids,
)
from state import ResourceRecord, StateSnapshot

# Template data poolform passed through: a cloud may add defaults, so only declared keys count.
SUBSET_KEYS = frozenset({"advanced_instance_config"})
UNORDERED_KEYS = frozenset({"zones", "secret_names"})


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == {} or value == []


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def is_sensitive_value(value: Any) -> bool:
    if isinstance(value, str):
        return value.startswith(SENSITIVE_PREFIX)
    if isinstance(value, Mapping):
        return any(is_sensitive_value(v) for v in value.values())
    if isinstance(value, list):
        return any(is_sensitive_value(v) for v in value)
    return False


def same_value(expected: Any, actual: Any, salt: str, *, subset: bool = False) -> bool:
    """Equal up to cosmetic differences. `subset`: keys the cloud added do not count."""
    if isinstance(expected, str):
        if expected.startswith(SENSITIVE_PREFIX):
            return actual is not None and hash_secret(str(actual), salt) == expected
        if expected == actual:
            return True  # the common case, without trying the strings as numbers
    elif (
        type(expected) is type(actual) and isinstance(expected, int | float) and expected == actual
    ):
        return True
    if _empty(expected) and _empty(actual):
        return True
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        keys = set(expected) if subset else set(expected) | set(actual)
        return all(same_value(expected.get(k), actual.get(k), salt, subset=subset) for k in keys)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            same_value(e, a, salt, subset=subset) for e, a in zip(expected, actual, strict=True)
        )
    left, right = _number(expected), _number(actual)
    if left is not None and right is not None:
        return left == right
    return bool(expected == actual)


def same_attribute(key: str, expected: Any, actual: Any, salt: str) -> bool:
    if key == "instance_type" and isinstance(actual, str):
        actual = actual.rsplit("/", 1)[-1]  # GCE reports machine types as URLs
    if key == "market_type" and isinstance(actual, str):
        actual = actual.upper()
    if key in UNORDERED_KEYS and isinstance(expected, list) and isinstance(actual, list):
        expected, actual = sorted(map(str, expected)), sorted(map(str, actual))
    return same_value(expected, actual, salt, subset=key in SUBSET_KEYS)


def _compare(
    record: ResourceRecord, observed: Observed, salt: str
) -> tuple[list[AttributeDrift], list[Note]]:
    try:
        expected = expected_observation(record.resource_type, record.attributes)
    except ProviderError:  # a record poolform cannot read as a shape: nothing to compare
        return [], []
    drifts: list[AttributeDrift] = []
    for key, want in sorted(expected.values.items()):
        if key not in observed.attributes or key in SCHEDULER_KEYS | INFORMATIONAL_KEYS:
            continue
        have = observed.attributes[key]
        if not same_attribute(key, want, have, salt):
            drifts.append(
                AttributeDrift(
                    key,
                    want,
                    have,
                    CONFIGURATION,
                    sensitive=is_sensitive_value(want),
                    restorable=key in expected.paths,
                )
            )
    notes: list[Note] = []
    desired = _number(observed.attributes.get("desired"))
    low, high = expected.values.get("min_size"), expected.values.get("max_size")
    if desired is not None and isinstance(low, int) and isinstance(high, int):
        count = int(desired)
        if not low <= count <= high:
            drifts.append(
                AttributeDrift("desired", f"{low}..{high}", count, CONFIGURATION, restorable=False)
            )
        elif count != low:
            code = NoteCode.SCHEDULER_MOVED
            notes.append(Note(record.address, code, text_of(code, count=count, low=low, high=high)))
    return drifts, notes


def _interrupted(snapshot: StateSnapshot, address: str, reason: str) -> str:
    """A recorded resource with an intent: a replace of it was cut short (the intent is cleared
    by the write that records its result), and what differs may be that replace's doing."""
    if address not in snapshot.intents:
        return reason
    return text_of(DriftReason.INTERRUPTED, reason=reason)


def detect_drift(
    snapshot: StateSnapshot,
    observed: Iterable[Observed],
    salt: str,
    refresh: RefreshResult | None = None,
) -> DriftReport:
    observed = list(observed)
    refresh = refresh or match_observed(snapshot, observed)
    by_address: dict[str, list[Observed]] = {}
    for item in observed:
        by_address.setdefault(item.address, []).append(item)
    drifted: list[ResourceDrift] = []
    notes: list[Note] = []
    leftovers = {o.address: o for o in refresh.orphans if is_left_behind(snapshot, o)}
    for record in snapshot:
        if record.address in refresh.missing:
            left = leftovers.get(record.address)
            reason = text_of(DriftReason.GONE)
            if left is not None:
                kept = ", ".join(f"{k} {v}" for k, v in sorted(left.provider_ids.items()))
                reason = text_of(DriftReason.GROUP_GONE, ids=kept)
            elif (named := named_by_record(refresh, snapshot, record.address)) is not None:
                reason += (
                    f"; the ids recorded for it name this state's {named.address} "
                    f"({shown_ids(named)}): were the records' ids swapped or edited by hand?"
                )
            drifted.append(
                ResourceDrift(
                    record.address,
                    record.resource_type,
                    DriftStatus.DELETED,
                    _interrupted(snapshot, record.address, reason),
                )
            )
            continue
        item = next(
            o for o in by_address[record.address] if is_same_resource(record.provider_ids, o)
        )
        changes, found = _compare(record, item, salt)
        notes.extend(found)
        if record.address in leftovers:
            unused = leftovers[record.address].provider_ids
            shown = ", ".join(f"{k} {v}" for k, v in sorted(unused.items()))
            code = NoteCode.LEFT_BEHIND
            notes.append(Note(record.address, code, text_of(code, ids=shown)))
        if changes:
            names = ", ".join(c.attribute for c in changes)
            drifted.append(
                ResourceDrift(
                    record.address,
                    record.resource_type,
                    DriftStatus.CHANGED,
                    _interrupted(
                        snapshot, record.address, text_of(DriftReason.CHANGED, attributes=names)
                    ),
                    tuple(changes),
                    dict(item.provider_ids),
                )
            )
    for address, short in refresh.shortfalls.items():
        who = "the group is launching" if short.heals else "the next apply launches"
        code = NoteCode.SHORTFALL
        missing = short.desired - short.running
        notes.append(
            Note(
                address,
                code,
                text_of(
                    code, running=short.running, desired=short.desired, who=who, missing=missing
                ),
            )
        )
    for address in sorted(refresh.adoptable):
        code = NoteCode.PENDING_ADOPTION
        notes.append(Note(address, code, text_of(code)))
    unmanaged = tuple(
        Unmanaged(
            o.address,
            o.resource_type,
            dict(o.provider_ids),
            text_of(DriftReason.UNMANAGED, hint=import_hint(o, snapshot)),
        )
        for o in refresh.orphans
        if o.address not in leftovers
    )
    return DriftReport(
        snapshot.lineage,
        snapshot.serial,
        checked=len(snapshot),
        drifted=tuple(drifted),
        unmanaged=unmanaged,
        notes=tuple(sorted(notes, key=lambda n: (n.address, n.code))),
    )
