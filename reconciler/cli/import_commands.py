"""import: bring an existing resource under management; local: change the simulated cloud
behind poolform's back (for drift and recovery demos)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from reconciler.cli.common import lock_timeout_option, parse_timeout, utf8_text
from reconciler.cli.numbers import Integer
from reconciler.errors import PoolformError

DIR_OPTION = click.option(
    "--dir", "directory", type=click.Path(path_type=Path), default=".", show_default=True
)


@click.command("import")
@click.argument("address", callback=utf8_text)
@click.argument("provider_id", metavar="ID", callback=utf8_text)
@DIR_OPTION
@lock_timeout_option
def import_(address: str, provider_id: str, directory: Path, lock_timeout: str) -> None:
    """Record an existing resource (ID as the provider names it) at ADDRESS of the configuration.

    It must be of ADDRESS's type, and no state may manage it (`state rm` it there first)."""
    from reconciler.usecases.importing import import_resource

    imported = import_resource(
        directory,
        address,
        provider_id,
        environ=os.environ,
        lock_timeout=parse_timeout(lock_timeout),
    )
    ids = ", ".join(f"{k}={v}" for k, v in sorted(imported.provider_ids.items()))
    click.echo(f"Imported {address} ({ids}).")
    click.echo("Run `poolform plan` to see how it differs from the configuration.")


@click.group()
def local() -> None:
    """Change the local provider's simulated cloud behind poolform's back."""


def cloud_of(directory: Path) -> Path:
    """Where the local cloud of the configuration in `directory` lives. Refuses, creating
    nothing, when there is no configuration, it is not on the local provider, or nothing was
    applied yet."""
    from providers.local.store import DB_NAME
    from reconciler.checks import load_configuration
    from reconciler.workspace import state_path

    configuration = load_configuration(directory, refuse_empty=True)
    provider = configuration.cluster.provider
    if provider != "local":
        raise PoolformError(
            f"{directory} is on the {provider} provider: `poolform local` changes only the "
            "local provider's simulated cloud"
        )
    state_dir = state_path(configuration).parent
    if not (state_dir / DB_NAME).exists():
        raise PoolformError(
            f"nothing has been applied in {directory} yet: it has no local cloud",
            hint=f"run `poolform apply {directory}` first",
        )
    return state_dir


@local.command("instances")
@DIR_OPTION
def local_instances(directory: Path) -> None:
    """Running instances, with their group's address."""
    from providers.local.admin import list_instances

    for item in list_instances(cloud_of(directory)):
        shown = f"{item['id']}  {item['instance_type']:<16} {item['group']:<21} {item['address']}"
        click.echo(shown.rstrip())


@local.command("terminate")
@click.argument("instance_id", callback=utf8_text)
@DIR_OPTION
def local_terminate(instance_id: str, directory: Path) -> None:
    """Terminate one instance, as a spot reclaim or an operator would."""
    from providers.local.admin import terminate_instance

    terminate_instance(cloud_of(directory), instance_id)
    click.echo(f"Terminated {instance_id}.")


@local.command("change-template")
@click.argument("address", callback=utf8_text)
@click.option(
    "--instance-type",
    metavar="TYPE",
    required=True,
    callback=utf8_text,
    help="The instance type to set.",
)
@DIR_OPTION
def local_change_template(address: str, instance_type: str, directory: Path) -> None:
    """Change a machine type's launch template by hand."""
    from providers.local.admin import change_template

    change_template(cloud_of(directory), address, instance_type=instance_type)
    click.echo(f"Changed the template of {address} to {instance_type}.")


@local.command("delete-group")
@click.argument("address", callback=utf8_text)
@DIR_OPTION
def local_delete_group(address: str, directory: Path) -> None:
    """Delete an instance group and its instances by hand."""
    from providers.local.admin import delete_group

    delete_group(cloud_of(directory), address)
    click.echo(f"Deleted the group of {address}.")


@local.command("resize-group")
@click.argument("address", callback=utf8_text)
@click.option(
    "--desired",
    metavar="N",
    type=Integer(),
    help="Instances wanted, as the scheduler would set it.",
)
@click.option(
    "--min", "min_size", metavar="N", type=Integer(), help="A new lower bound, as a console edit."
)
@click.option(
    "--max", "max_size", metavar="N", type=Integer(), help="A new upper bound, as a console edit."
)
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
        cloud_of(directory), address, desired=desired, min_size=min_size, max_size=max_size
    )
    click.echo(
        f"{address}: desired {done['desired']}, bounds {done['min_size']}..{done['max_size']}."
    )
