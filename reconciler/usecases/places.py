"""Where the capacity lives: recorded by apply (and import) on each cloud resource, and checked
before anything is planned, so that an edited `region` (or GCP `project`) is not read as the
whole fleet gone, made again in the new place while the old fleet runs on, recorded nowhere."""

from __future__ import annotations

from dataclasses import replace

from providers.place import has_place, provider_place
from reconciler.errors import PoolformError
from reconciler.loading import Configuration
from reconciler.usecases.common import cluster_file, first_few
from state import ResourceRecord, StateSnapshot


def configured_place(configuration: Configuration) -> str:
    """Where the configuration's provider would put the capacity ("" for none, or unknown)."""
    cluster = configuration.cluster
    return provider_place(cluster.provider, cluster.provider_settings, cluster.region)


def placed(record: ResourceRecord, place: str) -> ResourceRecord:
    """`record` with `place` when it is a cloud resource (not a control-plane object, which
    the state backend keeps wherever the fleet is)."""
    if not place or not has_place(record.resource_type):
        return record
    return replace(record, place=place)


def refuse_moved_place(configuration: Configuration, snapshot: StateSnapshot) -> None:
    """Refuse a state whose cloud resources were recorded in another place than the one the
    configuration now names (the Cluster's `region` edited, or AWS_DEFAULT_REGION when it
    names none, or GCP's `project`). A refresh asks only the new place, which has nothing
    under the recorded ids: every record read as "missing, recreate", and `destroy` dropped
    the records, deleting nothing. Records with no place (written before places were
    recorded) and a configuration whose place is unknown are let through, as before."""
    now = configured_place(configuration)
    if not now:
        return
    provider = configuration.cluster.provider
    elsewhere: dict[str, list[str]] = {}
    for record in snapshot:
        if record.attributes.get("provider", provider) != provider:
            continue  # another provider's: refuse_moved_provider's to name
        if record.place and record.place != now and has_place(record.resource_type):
            elsewhere.setdefault(record.place, []).append(record.address)
    if not elsewhere:
        return
    old, addresses = min(elsewhere.items())
    shown = first_few(addresses)
    what = (
        "the Cluster's `region` (or AWS_DEFAULT_REGION / the AWS profile when it names none)"
        if provider == "aws"
        else "the Cluster's `region` and `provider_settings.project`"
    )
    raise PoolformError(
        f"the state records {len(addresses)} resource(s) on {provider} in {old} ({shown}), "
        f"but the configuration now places them in {now}: poolform moves no capacity between "
        f"places, and planning in {now} would create it again there while the copy in {old} "
        "runs on, recorded nowhere; nothing was changed",
        location=cluster_file(configuration),
        hint=f"to move it, put {what} back to {old} and `poolform destroy` it (or plan its "
        f"deletion), then change it; to leave it in {old}, `poolform state rm ADDR` each "
        f"with {old} still configured",
    )
