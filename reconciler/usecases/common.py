"""What the use cases share: the configuration directory, environment values, the safety rules
that hold before anything is planned, and the provider opened for one refresh."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from providers.protocol import Provider
from providers.retry import SYSTEM_CLOCK, Clock, RetryPolicy
from reconciler.checks import load_configuration
from reconciler.drift.refresh import Refresh, refresh_all, refresh_observed
from reconciler.errors import Cancelled, Location, PoolformError
from reconciler.loading import Configuration, NothingDeclared
from reconciler.plan import Action, Plan
from reconciler.plan.expand import environment_names
from reconciler.workspace import nothing_carries, open_provider, state_path
from schemas import Cluster, Job
from state import ResourceRecord, StateSnapshot
from state.lineage import check_lineage

Confirm = Callable[[str], bool]  # asked "apply these changes" and the like; True goes on
EventSink = Callable[[dict[str, Any]], None]  # apply progress: the `apply --json` events


def ignore(_: object) -> None:
    """A callback for results nobody needs to see."""


def load_directory(path: Path, command: str) -> Configuration:
    """The configuration in directory `path`. A configuration is a directory: planning one of
    its files alone would plan to destroy everything the other files declare."""
    if path.exists() and not path.is_dir() and not path.is_file():
        raise PoolformError(
            f"`poolform {command}` takes a configuration directory: {path} is not one"
        )
    if path.is_file():
        raise PoolformError(
            f"`poolform {command}` takes a configuration directory, not a file: {path}",
            hint=f"a configuration is every *.yaml file of a directory: "
            f"`poolform {command} {path.parent}`",
        )
    return load_configuration(path)


def environment_values(configuration: Configuration, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment values the configuration refers to as `${env:NAME}`, read once here."""
    return {name: environ[name] for name in environment_names(configuration) if name in environ}


def refuse_emptied(configuration: Configuration, snapshot: StateSnapshot, destroy: bool) -> None:
    """A configuration that declares nothing is refused, as Terraform refuses a directory with
    no configuration files: it is the wrong directory, or one emptied by mistake, far more often
    than a wish to delete everything, which takes `destroy`."""
    # A Job is not planned (jobs submit runs it): a directory left with only jobs, its other
    # files moved or deleted, declares nothing either; it planned to delete everything.
    if destroy or any(not isinstance(d.model, Job) for d in configuration.documents):
        return
    where = configuration.directory
    only_jobs = (
        " (only jobs, which plans leave to `jobs submit`)" if configuration.documents else ""
    )
    if len(snapshot) == 0 and only_jobs:
        raise PoolformError(
            f"{where} declares nothing to plan{only_jobs}",
            hint="point poolform at the directory that holds the configuration; "
            "`poolform jobs submit FILE` runs a job",
        )
    if len(snapshot) == 0:
        raise NothingDeclared(configuration.directory, configuration.file_count)
    raise PoolformError(
        f"{where} declares nothing{only_jobs}, but its state records {len(snapshot)} "
        "resource(s): refusing to plan their deletion",
        hint="if its files were moved or deleted by mistake, restore them (or point poolform "
        f"at where they are now); only to delete those resources, `poolform destroy {where}`",
    )


def refuse_moved_provider(configuration: Configuration, snapshot: StateSnapshot) -> None:
    """Refuse a state whose records name another provider than the Cluster's (edited from
    `local` to `aws`, say). A refresh asks only the configuration's provider, which has
    nothing under those ids: every such record read as "missing, recreate", the plan created
    the capacity again on the new provider, and the old copy was left running, its record
    overwritten, recorded nowhere (a `destroy` dropped the records the same way). poolform
    moves no capacity between providers: it says so, and what to do, before anything is
    read from a cloud."""
    provider = configuration.cluster.provider
    elsewhere: dict[str, list[str]] = {}
    for record in snapshot:
        recorded = recorded_on_another_provider(configuration, record)
        if recorded is not None:
            elsewhere.setdefault(recorded, []).append(record.address)
    if not elsewhere:
        return
    old, addresses = min(elsewhere.items())
    shown = first_few(addresses)
    raise PoolformError(
        f"the state records {len(addresses)} resource(s) on the {old} provider ({shown}), but "
        f"the Cluster's provider is now {provider}: poolform moves no capacity between "
        f"providers, and planning on {provider} would create it again there while the {old} "
        "copy runs on, recorded nowhere; nothing was changed",
        location=cluster_file(configuration),
        hint=f"to move it, put back `provider: {old}` and `poolform destroy` it (or plan its "
        f"deletion), then change the provider; to leave it on {old}, "
        f"`poolform state rm ADDR` each with `provider: {old}` still set",
    )


def first_few(addresses: list[str]) -> str:
    """Up to three addresses, and how many more: what a refusal names of a long list."""
    more = f" and {len(addresses) - 3} more" if len(addresses) > 3 else ""
    return ", ".join(addresses[:3]) + more


def cluster_file(configuration: Configuration) -> Location | None:
    """The file that declares the Cluster, where a refusal about its settings points."""
    cluster = configuration.find(Cluster, configuration.cluster.name)
    return Location(configuration.ref_of(cluster).file) if cluster is not None else None


def recorded_on_another_provider(
    configuration: Configuration, record: ResourceRecord
) -> str | None:
    """The provider `record` names when it is not the Cluster's (see `refuse_moved_provider`;
    a pool naming another provider than the Cluster's is refused by validate), else None."""
    recorded = record.attributes.get("provider")
    if isinstance(recorded, str) and recorded != configuration.cluster.provider:
        return recorded
    return None


def confirmed(confirm: Confirm, question: str, cancelled: str) -> None:
    """Go on only if `confirm(question)` says yes; otherwise `Cancelled(cancelled)`
    ("Apply cancelled"), and nothing was changed."""
    if not confirm(question):
        raise Cancelled(cancelled)


def refresh_with_provider(
    configuration: Configuration,
    snapshot: StateSnapshot,
    salt: str,
    retry: RetryPolicy,
    clock: Clock,
) -> Refresh:
    """One full refresh with the configuration's provider, opened and closed around it; none
    for a state nothing was ever created from (nothing can carry its lineage)."""
    if nothing_carries(snapshot):
        return refresh_observed(snapshot, (), salt)
    provider = open_provider(configuration)
    try:
        return refresh_all(provider, snapshot, salt, retry, clock)
    finally:
        provider.close()


def created_addresses(plan: Plan) -> set[str]:
    """The addresses a plan creates something at: where a foreign state would duplicate."""
    return {c.address for c in plan.changes if c.action is Action.CREATE}


def refuse_foreign_state(
    configuration: Configuration,
    snapshot: StateSnapshot,
    addresses: Collection[str],
    provider: Provider | None = None,
    *,
    retry: RetryPolicy | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> None:
    """Refuse (``state.lineage.ForeignState``, naming both lineages) a state whose lineage is
    not the one the provider's poolform objects at `addresses` carry: the addresses this
    state would create something at (plan, apply) or misses a recorded resource at (drift).
    One batched provider call, and none at all when there is no such address (a steady
    state's plan) or no cloud that could hold anything (a local cloud never made)."""
    if not addresses:
        return
    if provider is None:
        if (
            configuration.cluster.provider == "local"
            and not (state_path(configuration).parent / "local-cloud.db").is_file()
        ):
            return
        opened = open_provider(configuration)
        try:
            refuse_foreign_state(
                configuration, snapshot, addresses, opened, retry=retry, clock=clock
            )
        finally:
            opened.close()
        return
    wanted = sorted(addresses)
    observed = (retry or RetryPolicy()).call(lambda: provider.list_at(wanted), sleep=clock.sleep)
    check_lineage(snapshot, observed, wanted)
