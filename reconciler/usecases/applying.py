"""Applying: a configuration directory (planned now, then confirmed) or a saved plan (its
reviewed steps, verified against a re-plan), and destroy. Always under the state lock."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from providers.protocol import Provider
from providers.retry import SYSTEM_CLOCK, Clock, RetryPolicy
from reconciler.apply import ApplyResult, walk_plan
from reconciler.apply.execute import ChangeExecutor
from reconciler.drift.refresh import refresh_all, refresh_saved
from reconciler.errors import PoolformError
from reconciler.loading import Configuration
from reconciler.loading.sources import digest, list_sources
from reconciler.plan import Plan, PlanOptions, make_plan
from reconciler.plan.expand import expand
from reconciler.plan.inputs import RefreshedSnapshot
from reconciler.plan.planfile import (
    SavedPlan,
    check_saved_origin,
    check_saved_plan,
    is_plan_file,
    read_plan,
)
from reconciler.usecases.common import (
    Confirm,
    EventSink,
    confirmed,
    created_addresses,
    environment_values,
    ignore,
    load_directory,
    refuse_emptied,
    refuse_foreign_state,
    refuse_moved_provider,
)
from reconciler.usecases.job_impact import with_jobs_affected
from reconciler.usecases.places import configured_place, refuse_moved_place
from reconciler.workspace import (
    hold_lock,
    local_cloud_absent,
    nothing_carries,
    open_provider,
    open_state,
    secret_salt,
)
from state import HistoryEntry, StateBackend, StateSnapshot, default_who

NOT_A_PLAN = "apply takes a plan file (from `poolform plan -out`) or a configuration directory"


@dataclass(frozen=True)
class AppliedPlan:
    plan: Plan
    result: ApplyResult | None  # None: the plan had nothing to do

    @property
    def ok(self) -> bool:
        return self.result is None or self.result.ok


@dataclass(frozen=True)
class _How:
    """How to apply, whatever is applied."""

    confirm: Confirm
    on_plan: Callable[[Plan], None]
    on_event: EventSink
    parallelism: int
    lock_timeout: float
    environ: Mapping[str, str]
    retry: RetryPolicy
    clock: Clock


def apply_plan(
    target: Path,
    *,
    options: PlanOptions | None = None,
    confirm: Confirm,
    on_plan: Callable[[Plan], None] = ignore,
    on_event: EventSink = ignore,
    parallelism: int = 10,
    lock_timeout: float = 0.0,
    environ: Mapping[str, str],
    retry: RetryPolicy | None = None,
    clock: Clock = SYSTEM_CLOCK,
    within: Path | None = None,
) -> AppliedPlan:
    """Apply `target`: a saved plan file (exactly its steps; `confirm` is not asked, the plan
    was reviewed) or a configuration directory (planned with `options`, applied once `confirm`
    says yes). The plan about to be applied goes to `on_plan` first, progress to `on_event`.
    `within`: the directory the user named to work in (`--chdir`); a saved plan made for
    another configuration is refused rather than applied there."""
    how = _How(
        confirm,
        on_plan,
        on_event,
        parallelism,
        lock_timeout,
        environ,
        retry or RetryPolicy(),
        clock,
    )
    options = options or PlanOptions()
    if not target.is_file():
        return _apply(load_directory(target, "apply"), options, None, how)
    if not is_plan_file(target):
        raise PoolformError(
            NOT_A_PLAN,
            hint=f"{target} is not a plan file; to apply the configuration it belongs to, "
            f"give its directory: `poolform apply {target.parent}`",
        )
    saved = read_plan(target)
    directory = planned_directory(saved)
    if within is not None and not _same_directory(directory, within):
        raise PoolformError(
            f"the plan was made for the configuration in {directory}, but --chdir names "
            f"{within}; nothing was applied",
            hint=f"apply it for {directory} without --chdir, or plan {within} with "
            "`poolform plan -out FILE` and apply that",
        )
    configuration = load_directory(directory, "apply")
    if options.targets or options.replace:
        raise PoolformError(
            "--target and --replace belong to the plan; a saved plan already has them"
        )
    return _apply(configuration, saved.plan.options, saved, how)


def _same_directory(one: Path, other: Path) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


def planned_directory(saved: SavedPlan) -> Path:
    """Where the configuration of `saved` is: the first place it was recorded (see
    reconciler/plan/planfile.py) that holds the configuration the plan was made from; failing
    that, the first that exists (which then refuses the plan as stale)."""
    existing = [candidate for candidate in saved.candidates if candidate.is_dir()]
    if not existing:
        tried = ", ".join(str(c) for c in saved.candidates)
        raise PoolformError(
            f"the configuration this plan was made from ({saved.directory}) is not here "
            f"(looked in {tried})",
            hint="run apply where the configuration is (`poolform --chdir DIR apply FILE`)",
        )
    for candidate in existing:
        try:
            listing = list_sources(candidate)
            if not listing.problems and digest(listing.sources) == saved.plan.config_digest:
                return candidate
        except PoolformError:
            continue
    return existing[0]


def destroy(
    directory: Path,
    *,
    targets: tuple[str, ...] = (),
    confirm: Confirm,
    on_plan: Callable[[Plan], None] = ignore,
    on_event: EventSink = ignore,
    parallelism: int = 10,
    lock_timeout: float = 0.0,
    environ: Mapping[str, str],
    retry: RetryPolicy | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> AppliedPlan:
    """Delete everything the configuration's state records (or only `targets` and what
    depends on them), once `confirm` says yes."""
    how = _How(
        confirm,
        on_plan,
        on_event,
        parallelism,
        lock_timeout,
        environ,
        retry or RetryPolicy(),
        clock,
    )
    options = PlanOptions(destroy=True, targets=targets)
    return _apply(load_directory(directory, "destroy"), options, None, how)


def _apply(
    configuration: Configuration, options: PlanOptions, saved: SavedPlan | None, how: _How
) -> AppliedPlan:
    backend = open_state(configuration)
    provider: Provider | None = None
    try:
        with hold_lock(
            backend, "destroy" if options.destroy else "apply", how.lock_timeout, configuration
        ):
            snapshot = backend.read()
            refuse_emptied(configuration, snapshot, options.destroy)
            refuse_moved_provider(configuration, snapshot)
            refuse_moved_place(configuration, snapshot)
            salt = secret_salt(configuration, snapshot.lineage)
            environment = environment_values(configuration, how.environ)
            if saved is not None and saved.rereads is not None:
                check_saved_origin(
                    saved.plan, configuration.digest, snapshot.lineage, snapshot.serial
                )
            if options.destroy and saved is None and nothing_carries(snapshot):
                # Nothing was ever created from this state, so nothing is to be deleted, and
                # no provider is opened for it (the local one makes its cloud's files).
                plan = make_plan(
                    configuration,
                    RefreshedSnapshot.unrefreshed(snapshot),
                    options,
                    salt=salt,
                    environment=environment,
                )
                how.on_plan(plan)
                return AppliedPlan(plan, None)
            if saved is None and nothing_carries(snapshot) and local_cloud_absent(configuration):
                # A first apply on the local provider: nothing carries this state's lineage, so
                # there is nothing to refresh (as plan), and its cloud, whose files opening it
                # makes, is opened once the changes are confirmed: a declined apply left them.
                refreshed = RefreshedSnapshot.unrefreshed(snapshot)
            else:
                # Opened only now: a stale or foreign saved plan is refused before a provider
                # exists (the local one makes its cloud's files when opened).
                provider = open_provider(configuration, backend)
                refreshed = _refreshed(provider, snapshot, salt, options, saved, how)
            plan = make_plan(configuration, refreshed, options, salt=salt, environment=environment)
            if saved is not None:
                check_saved_plan(
                    saved.plan, configuration.digest, snapshot.lineage, snapshot.serial, plan
                )
            refuse_foreign_state(
                configuration,
                snapshot,
                created_addresses(plan),
                provider,
                retry=how.retry,
                clock=how.clock,
            )
            plan = with_jobs_affected(plan, configuration, snapshot)
            how.on_plan(plan)
            if not plan.has_changes:
                return AppliedPlan(plan, None)
            if saved is None:
                question = (
                    "destroy all of this capacity" if options.destroy else "apply these changes"
                )
                cancelled = "Destroy cancelled" if options.destroy else "Apply cancelled"
                confirmed(how.confirm, question, cancelled)
            if provider is None:
                provider = open_provider(configuration, backend)
            clear = expand(configuration, salt, environment=environment, reveal=True)
            executor = ChangeExecutor(
                provider, backend, snapshot, clear, configured_place(configuration)
            )
            result = walk_plan(
                plan,
                executor,
                parallelism=how.parallelism,
                retry=how.retry,
                emit=how.on_event,
                clock=how.clock,
                # What an interrupted apply did changed the state too: its history says so.
                on_interrupted=lambda done: _record_history(
                    backend, plan, done, how.clock, "interrupted"
                ),
            )
            _record_history(backend, plan, result, how.clock, "ok" if result.ok else "failed")
    finally:
        if provider is not None:
            provider.close()
        backend.close()
    return AppliedPlan(plan, result)


def _refreshed(
    provider: Provider,
    snapshot: StateSnapshot,
    salt: str,
    options: PlanOptions,
    saved: SavedPlan | None,
    how: _How,
) -> RefreshedSnapshot:
    """What to plan against: for a saved plan, only what it touches, re-read by id (refused if
    it moved); otherwise one full refresh, or the records as they are with `--no-refresh`."""
    if saved is not None and saved.rereads is not None:
        return refresh_saved(
            provider, snapshot, saved.rereads, salt, how.retry, how.clock
        ).refreshed
    if options.refresh:
        return refresh_all(provider, snapshot, salt, how.retry, how.clock).refreshed
    return RefreshedSnapshot.unrefreshed(snapshot)


def _record_history(
    backend: StateBackend, plan: Plan, result: ApplyResult, clock: Clock, outcome: str
) -> None:
    """The apply's line in the state's history (what `state migrate` carries along): when,
    who, which plan, how many changes were made and how it ended (ok, failed, interrupted)."""
    plan_hash = hashlib.sha256(json.dumps(plan.to_json(), sort_keys=True).encode()).hexdigest()
    backend.append_history(
        HistoryEntry(
            time=clock.now().isoformat(timespec="seconds"),
            user=default_who(),
            plan_hash=plan_hash,
            changes=len(result.done),
            outcome=outcome,
            serial=backend.read().serial,
        )
    )
