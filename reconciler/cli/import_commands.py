"""import: bring an existing resource under management; local: change the simulated cloud
behind poolform's back (for drift and recovery demos)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from reconciler.cli.plan_commands import lock_timeout_option, parse_timeout
from reconciler.errors import PoolformError

DIR_OPTION = click.option(
    "--dir", "directory", type=click.Path(path_type=Path), default=".", show_default=True
)


def recorded_attributes(
    desired: dict[str, Any], observed: dict[str, Any], resource_type: str
) -> dict[str, Any]:
    """What state records for an imported resource: the configuration's shape, with what the
    provider reports laid over it, so the next plan shows how reality differs."""
    if resource_type not in ("machine_type", "worker_pool"):
        return {key: observed.get(key, value) for key, value in desired.items()}
    attributes = json.loads(json.dumps(desired))
    if resource_type == "machine_type":
        template = attributes["launch_templates"][0]
        for key in ("instance_type", "market_type"):
            if key in observed:
                template[key] = observed[key]
        for key in ("min_size", "max_size"):
            if key in observed:
                attributes[key] = observed[key]
    return attributes


@click.command("import")
@click.argument("address")
@click.argument("provider_id", metavar="ID")
@DIR_OPTION
@lock_timeout_option
def import_(address: str, provider_id: str, directory: Path, lock_timeout: str) -> None:
    """Record an existing resource (ID as the provider names it) at ADDRESS of the configuration."""
    from providers.protocol import TAG_ADDRESS, TAG_LINEAGE, TAG_TOKEN
    from reconciler.loading import load_configuration
    from reconciler.plan.expand import expand
    from reconciler.workspace import open_provider, open_state, secret_salt
    from state import ResourceRecord
    from state.locking import lock_state

    configuration = load_configuration(directory)
    backend = open_state(configuration)
    provider = open_provider(configuration, backend)
    try:
        with lock_state(backend, "import", parse_timeout(lock_timeout)):
            snapshot = backend.read()
            desired = expand(configuration, secret_salt(configuration, snapshot.lineage)).get(
                address
            )
            if desired is None:
                raise PoolformError(
                    f"{address} is not declared in {directory}",
                    hint="declare it first; `poolform plan` lists addresses",
                )
            if address in snapshot:
                raise PoolformError(
                    f"{address} is already managed", hint="`poolform state rm` it first"
                )
            tags = {
                TAG_LINEAGE: snapshot.lineage,
                TAG_ADDRESS: address,
                TAG_TOKEN: f"import-{provider_id}",
            }
            observed = provider.import_resource(address, desired.resource_type, provider_id, tags)
            attributes = recorded_attributes(
                desired.attributes, dict(observed.attributes), desired.resource_type
            )
            backend.write_resource(
                ResourceRecord(
                    address,
                    desired.resource_type,
                    attributes,
                    dict(observed.provider_ids),
                    desired.dependencies,
                ),
                expected_lineage=snapshot.lineage,
            )
    finally:
        provider.close()
        backend.close()
    click.echo(
        f"Imported {address} ({', '.join(f'{k}={v}' for k, v in sorted(observed.provider_ids.items()))})."
    )
    click.echo("Run `poolform plan` to see how it differs from the configuration.")


@click.group()
def local() -> None:
    """Change the local provider's simulated cloud behind poolform's back."""


@local.command("instances")
@DIR_OPTION
def local_instances(directory: Path) -> None:
    """Running instances, with their group's address."""
    from providers.local.admin import list_instances

    for item in list_instances(directory / ".poolform"):
        click.echo(f"{item['id']}  {item['instance_type']:<16} {item.get('group_address') or ''}")


@local.command("terminate")
@click.argument("instance_id")
@DIR_OPTION
def local_terminate(instance_id: str, directory: Path) -> None:
    """Terminate one instance, as a spot reclaim or an operator would."""
    from providers.local.admin import terminate_instance

    terminate_instance(directory / ".poolform", instance_id)
    click.echo(f"Terminated {instance_id}.")


@local.command("change-template")
@click.argument("address")
@click.option("--instance-type", required=True)
@DIR_OPTION
def local_change_template(address: str, instance_type: str, directory: Path) -> None:
    """Change a machine type's launch template by hand."""
    from providers.local.admin import change_template

    change_template(directory / ".poolform", address, instance_type=instance_type)
    click.echo(f"Changed the template of {address} to {instance_type}.")


@local.command("delete-group")
@click.argument("address")
@DIR_OPTION
def local_delete_group(address: str, directory: Path) -> None:
    """Delete an instance group and its instances by hand."""
    from providers.local.admin import delete_group

    delete_group(directory / ".poolform", address)
    click.echo(f"Deleted the group of {address}.")


@local.command("resize-group")
@click.argument("address")
@click.option("--desired", type=int, help="Instances wanted, as the scheduler would set it.")
@click.option("--min", "min_size", type=int, help="A new lower bound, as a console edit.")
@click.option("--max", "max_size", type=int, help="A new upper bound, as a console edit.")
@DIR_OPTION
def local_resize_group(
    address: str,
    desired: int | None,
    min_size: int | None,
    max_size: int | None,
    directory: Path,
) -> None:
    """Change a group's wanted count or bounds by hand."""
    from providers.local.admin import set_group_size

    done = set_group_size(
        directory / ".poolform", address, desired=desired, min_size=min_size, max_size=max_size
    )
    click.echo(
        f"{address}: desired {done['desired']}, bounds {done['min_size']}..{done['max_size']}."
    )
