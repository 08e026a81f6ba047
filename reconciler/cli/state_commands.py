"""state list|show|rm|pull|push, force-unlock: looking at and repairing recorded state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.common import lock_timeout_option, parse_timeout
from reconciler.errors import PoolformError

if TYPE_CHECKING:
    from state import StateBackend

DIR_OPTION = click.option(
    "--dir",
    "directory",
    type=click.Path(path_type=Path),
    default=".",
    show_default=True,
    help="The configuration directory.",
)


def _backend(directory: Path) -> StateBackend:
    from reconciler.checks import load_configuration
    from reconciler.workspace import open_state, state_path

    configuration = load_configuration(directory)
    if not state_path(configuration).exists():
        raise PoolformError(f"no state for {directory} yet", hint="run `poolform apply` first")
    return open_state(configuration)


@click.group()
def state() -> None:
    """Inspect and repair recorded state."""


@state.command("list")
@DIR_OPTION
def state_list(directory: Path) -> None:
    """Every recorded address."""
    backend = _backend(directory)
    try:
        for record in backend.read():
            click.echo(record.address)
    finally:
        backend.close()


@state.command("show")
@click.argument("address")
@DIR_OPTION
def state_show(address: str, directory: Path) -> None:
    """One recorded resource as JSON (sensitive values are salted hashes)."""
    backend = _backend(directory)
    try:
        record = backend.read().get(address)
    finally:
        backend.close()
    if record is None:
        raise PoolformError(f"{address} is not in the state")
    click.echo(
        json.dumps(
            {
                "address": record.address,
                "resource_type": record.resource_type,
                "attributes": record.attributes,
                "provider_ids": dict(record.provider_ids),
                "dependencies": list(record.dependencies),
                "tainted": record.tainted,
            },
            indent=2,
            sort_keys=True,
        )
    )


@state.command("rm")
@click.argument("address")
@DIR_OPTION
@lock_timeout_option
def state_rm(address: str, directory: Path, lock_timeout: str) -> None:
    """Forget a resource without deleting it in the cloud."""
    from reconciler.usecases.importing import forget_in_provider
    from state.locking import lock_state

    backend = _backend(directory)
    try:
        with lock_state(backend, "state rm", parse_timeout(lock_timeout)):
            snapshot = backend.read()
            record = snapshot.get(address)
            if record is None:
                raise PoolformError(f"{address} is not in the state")
            backend.delete_resource(address, expected_lineage=snapshot.lineage)
            # After the record is gone: a crash in between leaves a tagged, unrecorded
            # resource, which plans report and never delete.
            untagged = forget_in_provider(directory, record)
    finally:
        backend.close()
    click.echo(f"Removed {address} from the state (the resource itself was not touched).")
    click.echo(untagged)


@state.command("pull")
@DIR_OPTION
def state_pull(directory: Path) -> None:
    """The whole state as JSON on stdout."""
    from state.jsonformat import snapshot_to_json

    backend = _backend(directory)
    try:
        click.echo(json.dumps(snapshot_to_json(backend.read()), indent=2, sort_keys=True))
    finally:
        backend.close()


@state.command("push")
@click.argument("file", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@DIR_OPTION
@click.option("--force", is_flag=True, help="Accept another lineage or an older serial.")
@lock_timeout_option
def state_push(file: Path, directory: Path, force: bool, lock_timeout: str) -> None:
    """Replace the state with FILE (from `state pull`)."""
    from state.jsonformat import snapshot_from_json
    from state.locking import lock_state

    try:
        document = json.loads(file.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise PoolformError(f"{file}: not a state document: {exc}") from None
    snapshot = snapshot_from_json(document)
    backend = _backend(directory)
    try:
        with lock_state(backend, "state push", parse_timeout(lock_timeout)):
            serial = backend.replace_all(snapshot, force=force)
    finally:
        backend.close()
    click.echo(f"Pushed {len(snapshot)} resources; the state is now at serial {serial}.")


@click.command("force-unlock")
@click.argument("lock_id")
@DIR_OPTION
def force_unlock(lock_id: str, directory: Path) -> None:
    """Release a lock its holder abandoned (check it is really gone first)."""
    from state.errors import lock_is_stale

    backend = _backend(directory)
    try:
        held = backend.current_lock()
        if held is None:
            raise PoolformError("the state is not locked")
        backend.force_unlock(lock_id)
    finally:
        backend.close()
    gone = "; its process was gone" if lock_is_stale(held) else ""
    click.echo(
        f"Released the state lock {held.lock_id}, taken by {held.who} (pid {held.pid} on "
        f"{held.host}) for `{held.operation}` at {held.created}{gone}."
    )
