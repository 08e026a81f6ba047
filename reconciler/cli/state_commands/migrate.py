"""state migrate: the whole state copied to another backend under both locks, verified, and
the source marked as moved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.common import lock_timeout_option, parse_timeout
from reconciler.cli.state_commands.shared import DIR_OPTION, state
from reconciler.errors import PoolformError

if TYPE_CHECKING:
    from reconciler.loading import Configuration
    from state import StateBackend
    from state.errors import StateLocked
    from state.location import Location


@state.command("migrate")
@click.option(
    "--to", "to_url", metavar="URL", help="Where to copy the state (default: the Cluster's)."
)
@click.option(
    "--from", "from_url", metavar="URL", help="The state to copy (default: the Cluster's)."
)
@DIR_OPTION
@lock_timeout_option
def state_migrate(
    to_url: str | None, from_url: str | None, directory: Path, lock_timeout: str
) -> None:
    """Copy the whole state to another backend, under both locks, and verify the copy.

    URL: a path (SQLite), postgresql://user@host/db?schema=NAME, or
    s3://bucket/prefix?region=R. Lineage, serial, records, history, the salt and the
    control-plane objects are copied; the source is then marked as moved, so a runner still
    pointed at it is told where the state went.
    """
    from reconciler.checks import load_configuration
    from reconciler.scheduler.queue_place import queue_place, refuse_stranded_jobs
    from reconciler.workspace import open_state, refuse_leaving_the_local_cloud, state_location
    from state.errors import StateLocked, StateMoved
    from state.location import location_from_url, open_location
    from state.migrate import migrate, moving_back
    from state.sqlite import default_state_path

    if not to_url and not from_url:
        raise PoolformError("say where to: --to URL (or where from: --from URL)")
    configuration = load_configuration(directory)
    where = str(configuration.directory)

    def opened(url: str | None) -> StateBackend:
        if url is None:
            return open_state(configuration, moving=True)
        return open_location(location_from_url(url, Path.cwd()), directory=where)

    def located(url: str | None) -> Location:
        return state_location(configuration) if url is None else location_from_url(url, Path.cwd())

    local_dir = default_state_path(Path(configuration.directory).absolute()).parent
    refuse_stranded_jobs(
        queue_place(located(from_url), local_dir), queue_place(located(to_url), local_dir)
    )
    refuse_leaving_the_local_cloud(configuration, located(from_url), located(to_url))
    source = opened(from_url)
    try:
        try:
            target = opened(to_url)
        except StateMoved as moved:  # (a SQLite target says so as it is opened)
            raise moving_back(moved, source.location, located(to_url).describe()) from None
        try:
            copied = migrate(source, target, parse_timeout(lock_timeout))
        except StateLocked as locked:
            own = (from_url is None and locked.location == source.location) or (
                to_url is None and locked.location == target.location
            )
            raise _migrate_locked(locked, configuration if own else None) from None
        finally:
            target.close()
    finally:
        source.close()
    click.echo(
        f"Copied the state (lineage {copied.lineage}, serial {copied.serial}, "
        f"{_count(copied.resources, 'resource')}, "
        f"{_count(copied.history, 'history entry', 'history entries')}, "
        f"{_count(copied.objects, 'control-plane object')} and the salt) from {copied.source} to "
        f"{copied.target}, and verified the copy. {copied.source} is marked as moved"
        + (
            ": point the Cluster's `state` settings at the new backend:\n\n"
            + _cluster_state(located(to_url))
            if to_url
            else "; the Cluster's `state` settings name the new backend."
        )
    )


def _migrate_locked(locked: StateLocked, own: Configuration | None) -> PoolformError:
    """A migrate whose source or target another run holds. The Cluster's own state is refused
    as apply refuses it; another state, named by URL, cannot be reached by `force-unlock`
    (which works on the Cluster's state), so only waiting is offered."""
    from reconciler.workspace import locked_error
    from state.errors import lock_is_stale

    holder = locked.holder
    if own is not None:
        return locked_error(
            holder, own, lock_is_stale(holder), locked.detail, lease_left=locked.lease_left
        )
    said = "; that process is no longer running" if lock_is_stale(holder) else ""
    detail = f"; {locked.detail}" if locked.detail else ""
    return PoolformError(
        f"{locked.location} is locked by {holder.who} (pid {holder.pid} on {holder.host}) "
        f"since {holder.created}, for `{holder.operation}` (lock ID {holder.lock_id})"
        f"{said}{detail}; nothing was copied",
        hint="wait for it with --lock-timeout (e.g. --lock-timeout 2m): a holder that died "
        "frees it by itself (PostgreSQL: as its session ends; S3: once its lease runs out)",
    )


def _cluster_state(location: Location) -> str:
    """The Cluster's `state:` that names `location`, to paste into the Cluster's file (the
    next command refuses the moved state until it is there). Never a password: a PostgreSQL
    connection string is read from POOLFORM_PG_URL."""
    from state.location import PG_URL_VARIABLE

    def flow(settings: dict[str, object]) -> str:  # JSON's strings are YAML's: quoted, escaped
        return "{" + ", ".join(f"{k}: {json.dumps(v)}" for k, v in settings.items()) + "}"

    if location.backend == "postgres":
        setting = {"backend": "postgres", "dsn": f"${{env:{PG_URL_VARIABLE}}}"}
        line = flow({**setting, "key": location.schema})
        return (
            f"  state: {line}\n\nwith {PG_URL_VARIABLE} set to the connection string where "
            "poolform runs (or libpq's PGHOST, PGUSER, PGPASSWORD... and no `dsn`)."
        )
    if location.backend == "s3":
        settings: dict[str, object] = {
            "backend": "s3",
            "bucket": location.bucket,
            "key": location.prefix,
        }
        if location.region:
            settings["region"] = location.region
        if location.lease_seconds != 30:
            settings["lease_seconds"] = location.lease_seconds
        line = f"  state: {flow(settings)}"
        if location.endpoint:  # no Cluster setting: boto3 reads it from the environment
            return (
                f"{line}\n\nwith AWS_ENDPOINT_URL set to {location.endpoint} where poolform runs."
            )
        return line
    return f"  state: {flow({'backend': 'sqlite', 'path': str(location.path)})}"


def _count(number: int, one: str, many: str | None = None) -> str:
    return f"{number} {one if number == 1 else many or one + 's'}"
