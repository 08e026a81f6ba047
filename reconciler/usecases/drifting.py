"""Drift: reality against recorded state (`drift`, `plan --refresh-only`), and accepting it into
state (`apply --refresh-only`), which changes records and never capacity."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from providers.protocol import TAG_TOKEN, Provider
from providers.retry import SYSTEM_CLOCK, Clock, RetryPolicy
from reconciler.drift.accept import accepted_record
from reconciler.drift.model import DriftReport, DriftStatus
from reconciler.drift.refresh import refresh_all
from reconciler.errors import PoolformError
from reconciler.plan.refresh import RefreshResult, is_left_behind
from reconciler.usecases.common import (
    Confirm,
    confirmed,
    ignore,
    load_directory,
    refresh_with_provider,
    refuse_foreign_state,
    refuse_moved_provider,
)
from reconciler.usecases.places import refuse_moved_place
from reconciler.workspace import (
    changing_run_warning,
    hold_lock,
    nothing_carries,
    open_provider,
    open_state,
    read_state_for_reading,
    secret_salt,
)
from state import StateSnapshot


class NothingRecorded(PoolformError):
    """Drift was asked of a state that records no resources."""


@dataclass(frozen=True)
class AcceptedDrift:
    report: DriftReport
    accepted: int  # drifted resources written into state (0: nothing had drifted)


def detect_drift(
    directory: Path,
    *,
    lock_timeout: float = 0.0,
    retry: RetryPolicy | None = None,
    clock: Clock = SYSTEM_CLOCK,
    refresh_only: bool = False,
    lock: bool = True,
) -> DriftReport:
    """Read state (briefly under the lock, so no apply is seen half-way), list what the provider
    has in one batched refresh, and compare. Changes nothing. A state that records nothing is
    an error, not "no drift": a scheduled check pointed at the wrong state must not pass.

    `refresh_only` (`plan --refresh-only`) shows what `apply --refresh-only` would accept, so
    it judges an empty state as that does, as Terraform's `-refresh-only` does: nothing to
    accept, and for a state no create ever started from, no provider opened. `lock=False`:
    read without the lock (`--no-lock`, see `read_state_for_reading`)."""
    command = "plan" if refresh_only else "drift"  # as the lock and its errors name it
    configuration = load_directory(directory, "drift")
    snapshot, holder = read_state_for_reading(configuration, command, lock_timeout, lock=lock)
    if refresh_only and nothing_carries(snapshot):
        return DriftReport(snapshot.lineage, snapshot.serial, checked=0)
    if len(snapshot) == 0 and not refresh_only:
        raise NothingRecorded(
            "nothing is recorded for this configuration: apply it first, or point at its state",
            hint=f"{directory} has no applied resources in its state; drift compares what "
            "apply recorded with the cloud",
        )
    refuse_moved_provider(configuration, snapshot)
    refuse_moved_place(configuration, snapshot)
    salt = secret_salt(configuration, snapshot.lineage)
    report = refresh_with_provider(
        configuration, snapshot, salt, retry or RetryPolicy(), clock
    ).report
    refuse_foreign_state(configuration, snapshot, _missing(report), retry=retry, clock=clock)
    if holder is not None:
        report = replace(report, warnings=(changing_run_warning(holder, "drift check"),))
    return report


def left_behind_token(snapshot: StateSnapshot, found: RefreshResult, address: str) -> str | None:
    """The idempotency token of what is left of a resource deleted by hand (the launch template
    of a group deleted in the console). Forgetting the record alone would leave that part
    recorded nowhere, reported for ever and deleted by no plan; kept as the address's create
    intent, the next plan adopts it (the create re-run with its token makes the group on it)
    or, when the address is no longer declared, deletes it."""
    left = [o for o in found.orphans if o.address == address and is_left_behind(snapshot, o)]
    tokens = {o.tags.get(TAG_TOKEN) for o in left} - {None}
    return tokens.pop() if len(tokens) == 1 else None


def _missing(report: DriftReport) -> set[str]:
    """Recorded resources the provider no longer has under this state's lineage."""
    return {d.address for d in report.drifted if d.status is DriftStatus.DELETED}


def accept_drift(
    directory: Path,
    *,
    confirm: Confirm,
    on_report: Callable[[DriftReport], None] = ignore,
    lock_timeout: float = 0.0,
    retry: RetryPolicy | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> AcceptedDrift:
    """Record reality in state, under the lock, one state write per resource like any apply:
    the report goes to `on_report`, and once `confirm` says yes every drifted record takes the
    values the provider reports (a resource deleted by hand is forgotten). For a state no
    create ever started from there is nothing to compare: no provider is opened (the local one
    would make its cloud's files), nothing is written."""
    configuration = load_directory(directory, "apply")
    backend = open_state(configuration)
    provider: Provider | None = None
    try:
        with hold_lock(backend, "apply", lock_timeout, configuration):
            snapshot = backend.read()
            if nothing_carries(snapshot):
                report = DriftReport(snapshot.lineage, snapshot.serial, checked=0)
                on_report(report)
                return AcceptedDrift(report, 0)
            refuse_moved_provider(configuration, snapshot)
            refuse_moved_place(configuration, snapshot)
            provider = open_provider(configuration, backend)
            salt = secret_salt(configuration, snapshot.lineage)
            refresh = refresh_all(provider, snapshot, salt, retry or RetryPolicy(), clock)
            report = refresh.report
            refuse_foreign_state(
                configuration, snapshot, _missing(report), provider, retry=retry, clock=clock
            )
            on_report(report)
            if not report.drifted:
                return AcceptedDrift(report, 0)
            confirmed(confirm, "accept these values into state", "Apply cancelled")
            for item in report.drifted:
                if item.status is DriftStatus.DELETED:
                    left = left_behind_token(snapshot, refresh.refreshed.found, item.address)
                    backend.delete_resource(item.address, expected_lineage=snapshot.lineage)
                    if left is not None:  # after: deleting a record clears its intent
                        backend.record_intent(item.address, left)
                    continue
                record = snapshot.get(item.address)
                assert record is not None  # drift is found only for recorded resources
                backend.write_resource(
                    accepted_record(record, item, salt), expected_lineage=snapshot.lineage
                )
    finally:
        if provider is not None:
            provider.close()
        backend.close()
    return AcceptedDrift(report, len(report.drifted))
