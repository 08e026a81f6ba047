"""Refresh: the one step that reads the provider before planning or reporting drift.

Two ways to read, one result:
- `refresh_all`: everything tagged with the state's lineage, in one batched `list` (plan, drift,
  apply of a directory);
- `refresh_saved`: only the objects a saved plan touches, by id, in one batched `read`, refused
  when one of them moved since the plan was made (apply of a saved plan).
Either way what the provider reports is matched against the records (plan/refresh.py), compared
attribute by attribute (compare.py), and turned into the refreshed snapshot the planner diffs
against (plan/inputs.py). The provider is called through the one retry policy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from providers.protocol import Observed, Provider
from providers.retry import Clock, RetryPolicy
from reconciler.drift.accept import accept_reality, unplaced_drift
from reconciler.drift.compare import detect_drift
from reconciler.drift.model import DriftReport
from reconciler.plan.inputs import RefreshedSnapshot
from reconciler.plan.refresh import RefreshResult, match_observed
from reconciler.plan.reread import Reread, check_rereads
from state import StateSnapshot


@dataclass(frozen=True)
class Refresh:
    """What one refresh found: the drift report, and the snapshot to plan against."""

    report: DriftReport
    refreshed: RefreshedSnapshot


def refresh_all(
    provider: Provider, snapshot: StateSnapshot, salt: str, retry: RetryPolicy, clock: Clock
) -> Refresh:
    """Everything tagged with this state, matched against the records, with its drift."""
    observed = retry.call(lambda: provider.list(snapshot.lineage), sleep=clock.sleep)
    return _refreshed(snapshot, snapshot, observed, salt)


def refresh_observed(snapshot: StateSnapshot, observed: Sequence[Observed], salt: str) -> Refresh:
    """What `observed` says of every record: for a state nothing was ever created from, with
    nothing observed, no provider needs opening (opening one may create files)."""
    return _refreshed(snapshot, snapshot, observed, salt)


def refresh_saved(
    provider: Provider,
    snapshot: StateSnapshot,
    rereads: Reread,
    salt: str,
    retry: RetryPolicy,
    clock: Clock,
) -> Refresh:
    """A saved plan's objects, read back by id; refused if one of them moved."""
    refs = list(rereads.refs.values())
    observed = retry.call(lambda: provider.read(refs), sleep=clock.sleep)
    check_rereads(rereads, observed, salt)
    touched = {ref.address for ref in rereads.refs.values()}
    compared = replace(
        snapshot,
        resources={a: r for a, r in snapshot.resources.items() if a in touched},
        intents={a: i for a, i in snapshot.intents.items() if a in touched},
    )
    return _refreshed(snapshot, compared, observed, salt)


def _refreshed(
    snapshot: StateSnapshot, compared: StateSnapshot, observed: Sequence[Observed], salt: str
) -> Refresh:
    """`compared` (all of `snapshot`, or the part a saved plan touches) against `observed`."""
    matched: RefreshResult = match_observed(compared, observed)
    report = detect_drift(compared, observed, salt, matched)
    drifted = {d.address: tuple(a.attribute for a in d.attributes) for d in report.drifted}
    reality = accept_reality(snapshot, report, salt, forget_deleted=False)
    unplaced = unplaced_drift(snapshot, report, salt)
    return Refresh(report, RefreshedSnapshot(reality, matched, drifted, unplaced))
