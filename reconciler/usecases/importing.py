"""Import: take an existing cloud resource under management at an address of the
configuration, recording it in state (the next plan shows how it differs)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from providers.protocol import (
    TAG_ADDRESS,
    TAG_LINEAGE,
    TAG_TOKEN,
    ErrorKind,
    Provider,
    ProviderError,
    ResourceRef,
)
from reconciler.errors import PoolformError, UnknownAddress
from reconciler.plan.expand import expand
from reconciler.printable import one_line
from reconciler.usecases.common import (
    environment_values,
    load_directory,
    recorded_on_another_provider,
)
from reconciler.usecases.places import configured_place, placed
from reconciler.workspace import (
    hold_lock,
    local_cloud_empty,
    open_provider,
    open_state,
    secret_salt,
    state_path,
)
from state import LockLost, ResourceRecord


class LostBeforeUntagging(PoolformError):
    """`state rm` removed the record, then found its lock gone before the untagging."""

    def __init__(self, address: str, ids: str, provider_id: str) -> None:
        super().__init__(
            f"{address} was removed from the state, then this process lost the state lock "
            "(broken by `force-unlock`, or its lease ran out), so the provider was left as it "
            f"is: it still marks {ids} as this state's; plans report it as unmanaged and never "
            "delete it",
            hint=f"`poolform import {address} {provider_id}` records it again; a `poolform state rm` "
            "then untags it",
        )


@dataclass(frozen=True)
class ImportedResource:
    address: str
    provider_ids: Mapping[str, str]


def recorded_attributes(
    desired: dict[str, Any], observed: dict[str, Any], resource_type: str
) -> dict[str, Any]:
    """What state records for an imported resource: the configuration's shape, with what the
    provider reports laid over it, so the next plan shows how reality differs."""
    if resource_type not in ("machine_type", "worker_pool"):
        return {key: observed.get(key, value) for key, value in desired.items()}
    attributes: dict[str, Any] = json.loads(json.dumps(desired))
    if resource_type == "machine_type":
        template = attributes["launch_templates"][0]
        for key in ("instance_type", "market_type"):
            if key in observed:
                template[key] = observed[key]
        for key in ("min_size", "max_size"):
            if key in observed:
                attributes[key] = observed[key]
    return attributes


def import_resource(
    directory: Path,
    address: str,
    provider_id: str,
    *,
    environ: Mapping[str, str],
    lock_timeout: float = 0.0,
) -> ImportedResource:
    """Record the resource the provider knows as `provider_id` at `address`, tagging it as
    this state's so refresh finds it from now on."""
    configuration = load_directory(directory, "import")
    backend = open_state(configuration)
    provider: Provider | None = None
    try:
        with hold_lock(backend, "import", lock_timeout, configuration):
            snapshot = backend.read()
            salt = secret_salt(configuration, snapshot.lineage)
            environment = environment_values(configuration, environ)
            declared = expand(configuration, salt, environment=environment)
            desired = declared.get(address)
            if desired is None:
                # declare it first, or it is a typo: the hint names the closest address
                raise UnknownAddress(address, list(declared), f"declared in {directory}",
                                     "poolform plan")  # fmt: skip
            if address in snapshot:
                raise PoolformError(
                    f"{address} is already managed", hint="`poolform state rm` it first"
                )
            if not provider_id.strip():  # the provider would look for an id of blanks
                raise PoolformError(f"{address}: the ID is empty; give the provider's id")
            owner = next((r for r in snapshot if provider_id in r.provider_ids.values()), None)
            if owner is not None and owner.resource_type != desired.resource_type:
                # Moving it would be refused after the `state rm` the hint asked for: say so.
                raise PoolformError(
                    f"{shown_id(provider_id)} is already managed as {owner.address}, a "
                    f"{owner.resource_type}: it cannot be imported at {address}, a "
                    f"{desired.resource_type}"
                )
            if owner is not None:
                raise PoolformError(
                    f"{shown_id(provider_id)} is already managed as {owner.address}",
                    hint=f"`poolform state rm {owner.address}` first to move it to {address}",
                )
            if local_cloud_empty(configuration):  # opened, it would be made, empty
                raise PoolformError(
                    f"{address}: {shown_id(provider_id)}: not found",
                    hint=f"the local cloud in {state_path(configuration).parent} holds "
                    "nothing: nothing was applied there",
                )
            provider = open_provider(configuration, backend)
            tags = {
                TAG_LINEAGE: snapshot.lineage,
                TAG_ADDRESS: address,
                TAG_TOKEN: f"import-{provider_id}",
            }
            # Tagging it is a change to the cloud: a run whose lock was broken (force-unlock)
            # or whose lease ran out while it opened the provider must not make it, as apply's
            # changes must not (reconciler.apply.execute), and it is made under a fresh lease.
            backend.confirm_held()
            try:
                observed = provider.import_resource(
                    address, desired.resource_type, provider_id, tags
                )
            except ProviderError as error:  # its message names the ID as it was given
                raise _with_shown_id(error, provider_id) from None
            attributes = recorded_attributes(
                desired.attributes, dict(observed.attributes), desired.resource_type
            )
            record = ResourceRecord(
                address,
                desired.resource_type,
                attributes,
                dict(observed.provider_ids),
                desired.dependencies,
            )
            backend.write_resource(
                placed(record, configured_place(configuration)),  # found there: it lives there
                expected_lineage=snapshot.lineage,
            )
    finally:
        if provider is not None:
            provider.close()
        backend.close()
    return ImportedResource(address, dict(observed.provider_ids))


def forget_in_provider(
    directory: Path, record: ResourceRecord, lineage: str, confirm_held: Callable[[], None]
) -> str:
    """`state rm`'s second half: the provider stops marking the resource as this state's
    (removes poolform's tags, or records it as forgotten), so no plan or drift sees it again.
    What the provider marks as another lineage's is left as it is: the record's ids named
    another state's resource, whose tags that state's plans need. Returns what happened, in
    words for the user. `confirm_held` (the backend's) runs just before the untagging: a run
    that lost its lock meanwhile must not untag what the run now holding it may have imported
    again; it raises `LostBeforeUntagging` instead."""
    ids = ", ".join(f"{k} {v}" for k, v in sorted(record.provider_ids.items()))
    if not ids:
        return "It had no provider ids: there was nothing to untag."
    kept = (
        f"warning: the provider still marks {ids} as this state's ({{}}); plans report it as "
        f"unmanaged and never delete it; `poolform import {record.address} ID` takes it back"
    )
    try:
        configuration = load_directory(directory, "state rm")
        recorded = recorded_on_another_provider(configuration, record)
        if recorded is not None:
            # The Cluster's provider has nothing under these ids: asking it would say "no
            # longer has", while the resource runs on, still tagged, on the recorded provider.
            return kept.format(
                f"it is on the {recorded} provider, and the Cluster's is now "
                f"{configuration.cluster.provider}"
            )
        now = configured_place(configuration)
        if record.place and now and record.place != now:  # the same, for an edited region
            return kept.format(f"it is in {record.place}, and the configuration names {now}")
        provider = open_provider(configuration)
    except (ProviderError, PoolformError) as error:
        return kept.format(getattr(error, "message", str(error)))
    try:
        ref = ResourceRef(record.address, record.resource_type, record.provider_ids)
        seen = provider.read([ref])
        owners = {o.tags.get(TAG_LINEAGE, "") for o in seen} - {"", lineage}
        if owners:
            return (
                f"The provider marks {ids} as another state's (lineage {', '.join(sorted(owners))}"
                "), not this one's: it was left as it is."
            )
        # This state's object at another address (ids edited or swapped): untagged, that
        # address would lose it, and its next plan would make a second one.
        elsewhere = {
            o.tags.get(TAG_ADDRESS, "") for o in seen if o.tags.get(TAG_LINEAGE) == lineage
        } - {"", record.address}
        if elsewhere:
            return (
                f"The provider marks {ids} as this state's {', '.join(sorted(elsewhere))}, not "
                f"{record.address}: it was left as it is."
            )
        try:
            confirm_held()
        except LockLost:
            raise LostBeforeUntagging(record.address, ids, _import_id(record)) from None
        provider.forget(record.address, record.resource_type, record.provider_ids)
    except ProviderError as error:
        if error.kind is ErrorKind.NOT_FOUND:
            return f"The provider no longer has {ids}."
        return kept.format(error.message)
    finally:
        provider.close()
    return (
        f"The provider no longer marks {ids} as this state's, so plans leave it alone; "
        f"`poolform import {record.address} {_import_id(record)}` takes it back."
    )


def _import_id(record: ResourceRecord) -> str:
    """The id `poolform import` takes the resource back by: its group's, or its one id."""
    key = "group" if "group" in record.provider_ids else next(iter(sorted(record.provider_ids)))
    return record.provider_ids[key]


def shown_id(provider_id: str) -> str:
    """An ID given on the command line, as a message shows it: quoted, with its control
    characters escaped, when it holds any or a blank. An ID `x\\nerror: ...` printed raw in the
    provider's "not found" forged a line of output of its own."""
    if provider_id.isprintable() and " " not in provider_id:
        return provider_id
    return f"'{one_line(provider_id)}'"


def _with_shown_id(error: ProviderError, provider_id: str) -> ProviderError:
    shown = shown_id(provider_id)
    if shown == provider_id or provider_id not in error.message:
        return error
    message = error.message.replace(provider_id, shown)
    return ProviderError(error.kind, message, address=error.address, retried=error.retried)
