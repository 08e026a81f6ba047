"""Planning a configuration, and saved plans (`plan -out`, `show`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from providers.retry import SYSTEM_CLOCK, Clock, RetryPolicy
from reconciler.errors import PoolformError
from reconciler.gcpause import collector_paused
from reconciler.loading import Configuration
from reconciler.plan import Plan, PlanOptions, make_plan
from reconciler.plan.inputs import RefreshedSnapshot
from reconciler.plan.planfile import SavedPlan, read_plan, write_plan
from reconciler.plan.reread import Reread, plan_rereads
from reconciler.usecases.common import (
    created_addresses,
    environment_values,
    load_directory,
    refresh_with_provider,
    refuse_emptied,
    refuse_foreign_state,
    refuse_moved_provider,
)
from reconciler.usecases.job_impact import with_jobs_affected
from reconciler.usecases.places import refuse_moved_place
from reconciler.workspace import (
    changing_run_warning,
    pin_state,
    read_state_for_reading,
    secret_salt,
)


@dataclass(frozen=True)
class PlannedConfiguration:
    plan: Plan
    directory: Path  # as given: a saved plan keeps it so apply finds the configuration again
    rereads: Reread | None  # what applying it as a saved plan re-reads (None: not refreshed)
    configuration: Configuration


def plan_configuration(
    directory: Path,
    options: PlanOptions,
    *,
    environ: Mapping[str, str],
    lock_timeout: float = 0.0,
    retry: RetryPolicy | None = None,
    clock: Clock = SYSTEM_CLOCK,
    command: str = "plan",
    lock: bool = True,
) -> PlannedConfiguration:
    """Load, read state (briefly under the lock, so no apply is seen half-way), refresh unless
    `options.refresh` is off, and plan. Changes nothing but the state's first creation.
    `command`: the one the user ran, as errors name it (`graph` plans too). `lock=False`:
    read state without the lock (`--no-lock`, see `read_state_for_reading`)."""
    # The configuration and the plan live until the command ends and hold no cycles: built
    # with the collector paused and kept out of its later scans, which on 10,000 resources
    # cost ~0.1 s. A provider's refresh runs with the collector on: SDKs do make cycles.
    with collector_paused(keep=True):
        configuration = load_directory(directory, command)
        snapshot, holder = read_state_for_reading(configuration, command, lock_timeout, lock=lock)
    refuse_emptied(configuration, snapshot, options.destroy)
    refuse_moved_provider(configuration, snapshot)
    refuse_moved_place(configuration, snapshot)
    salt = secret_salt(configuration, snapshot.lineage)
    environment = environment_values(configuration, environ)
    refresh = None
    if options.refresh:
        refresh = refresh_with_provider(
            configuration, snapshot, salt, retry or RetryPolicy(), clock
        )
    refreshed = refresh.refreshed if refresh else RefreshedSnapshot.unrefreshed(snapshot)
    with collector_paused(keep=True):
        plan = make_plan(configuration, refreshed, options, salt=salt, environment=environment)
        rereads = plan_rereads(plan, snapshot, refresh.refreshed.found, salt) if refresh else None
    if refresh:  # (a provider call: outside the paused collector)
        refuse_foreign_state(
            configuration, snapshot, created_addresses(plan), retry=retry, clock=clock
        )
    plan = with_jobs_affected(plan, configuration, snapshot)
    if holder is not None:
        plan = replace(plan, warnings=(*plan.warnings, changing_run_warning(holder)))
    return PlannedConfiguration(plan, directory, rereads, configuration)


def save_plan(
    planned: PlannedConfiguration,
    path: Path,
    *,
    label: str | None = None,
    commit: str | None = None,
) -> None:
    """`plan -out FILE`: the plan, sealed, for `apply FILE`, with what it was made for."""
    from state.errors import StateError, StateForbidden

    write_plan(planned.plan, path, planned.directory, planned.rereads, label=label, commit=commit)
    # A plan made against a state that does not exist yet names it: create it now (with the
    # plan's lineage and salt), so `apply FILE` finds the state the plan was made from.
    try:
        pin_state(planned.configuration, planned.plan.lineage)
    except StateError as error:
        # Not made, the state the file names is no state `apply` will ever find: no file.
        path.unlink(missing_ok=True)
        if not isinstance(error, StateForbidden):
            raise
        raise PoolformError(
            f"{error.refused}; no state exists yet, and saving a plan makes it (so that "
            f"`apply {path}` finds the state the plan was made from), a write these "
            "credentials may not make; nothing was saved",
            hint="plan without -out, or run the first `poolform apply` (or this plan -out) "
            "with credentials that may write the state",
        ) from None


def read_saved_plan(path: Path) -> SavedPlan:
    """What a `plan -out` file holds (refused when damaged or edited)."""
    return read_plan(path)
