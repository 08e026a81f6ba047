"""state list|show|rm|pull: the recorded resources, read one by one or whole, and one forgotten."""

from __future__ import annotations

import json
from pathlib import Path

import click

from reconciler.cli.common import lock_timeout_option
from reconciler.cli.state_commands.shared import (
    DIR_OPTION,
    jobs_refusal,
    open_backend,
    salvaged,
    state,
)
from reconciler.errors import PoolformError, UnknownAddress


@state.command("list")
@click.argument("addresses", nargs=-1, metavar="[ADDR]...")
@click.option(
    "--id", "record_id", metavar="ID", help="Only the resources whose recorded ids include ID."
)
@DIR_OPTION
def state_list(addresses: tuple[str, ...], record_id: str | None, directory: Path) -> None:
    """Every recorded address, or those ADDR selects (a machine pool: its machine types)."""
    from reconciler.usecases.showing import listed_addresses

    with open_backend(directory) as backend:
        snapshot = salvaged(backend)
    for address in listed_addresses(snapshot, addresses, record_id):
        click.echo(address)


@state.command("show")
@click.argument("address")
@DIR_OPTION
def state_show(address: str, directory: Path) -> None:
    """One recorded resource as JSON (sensitive values are salted hashes)."""
    from reconciler.usecases.showing import record_document

    with open_backend(directory) as backend:
        snapshot = backend.read_salvaged()
    if address in snapshot.damaged:
        raise PoolformError(
            f"the record of {address} is damaged: {snapshot.damaged[address]}",
            hint=f"`poolform state rm {address}` forgets it; `poolform import` takes it back",
        )
    record = snapshot.get(address)
    if record is None:
        raise UnknownAddress(address, snapshot.addresses(), "in the state", "poolform state list")
    click.echo(json.dumps(record_document(record), indent=2, sort_keys=True))


@state.command("rm")
@click.argument("address")
@DIR_OPTION
@lock_timeout_option
def state_rm(address: str, directory: Path, lock_timeout: str) -> None:
    """Forget a resource (or a damaged record) without deleting it in the cloud."""
    from reconciler.usecases.importing import forget_in_provider
    from state import StateSnapshot

    with open_backend(directory, locked_for="state rm", lock_timeout=lock_timeout) as backend:
        snapshot = backend.read_salvaged()
        if address not in snapshot and address not in snapshot.damaged:
            raise UnknownAddress(
                address, snapshot.addresses(), "in the state", "poolform state list"
            )
        record = snapshot.get(address)
        if record is not None:
            after = StateSnapshot.from_records(
                snapshot.lineage, snapshot.serial, [r for r in snapshot if r.address != address]
            )
            refusal = jobs_refusal(
                directory, snapshot, after, f"forgetting {address}",
                f"then `poolform state rm {address}` again",
            )  # fmt: skip
            if refusal is not None:
                raise refusal
        backend.delete_resource(address, expected_lineage=snapshot.lineage)
        # After the record is gone: a crash in between leaves a tagged, unrecorded resource,
        # which plans report and never delete.
        untagged = (
            forget_in_provider(directory, record, snapshot.lineage, backend.confirm_held)
            if record is not None
            else "Its record was damaged, so the provider still marks the resource as this "
            f"state's: plans report it and never delete it; `poolform import {address} ID` "
            "takes it back."
        )
    click.echo(f"Removed {address} from the state (the resource itself was not touched).")
    click.echo(untagged)


@state.command("pull")
@DIR_OPTION
def state_pull(directory: Path) -> None:
    """The whole state as JSON on stdout (never the salt: only a value that identifies it)."""
    from state import StateError
    from state.jsonformat import snapshot_to_json

    with open_backend(directory) as backend:
        snapshot = salvaged(backend)
        try:
            salt: str | None = backend.salt(snapshot.lineage)
        except StateError:
            salt = None  # a layout-1 state whose secret is missing: pull what there is
    click.echo(json.dumps(snapshot_to_json(snapshot, salt=salt), indent=2, sort_keys=True))
