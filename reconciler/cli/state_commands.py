"""state list|show|rm|pull|push, force-unlock: looking at and repairing recorded state.

These commands work around a damaged record: they name it on stderr and go on with the rest,
and `state rm` drops it. (plan and apply refuse to run over one: see state.DamagedRecords.)
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.common import (
    lock_timeout_option,
    parse_timeout,
    standard_input_bytes,
    warn_damaged,
)
from reconciler.errors import PathNotFound, PoolformError, UnknownAddress

if TYPE_CHECKING:
    from reconciler.loading import Configuration
    from state import StateBackend, StateSnapshot
    from state.errors import StateLocked
    from state.location import Location

DIR_OPTION = click.option(
    "--dir",
    "directory",
    type=click.Path(path_type=Path),
    default=".",
    show_default=True,
    help="The configuration directory.",
)


@contextmanager
def _backend(
    directory: Path, *, must_exist: bool = True, locked_for: str = "", lock_timeout: str = "0s"
) -> Iterator[StateBackend]:
    """The configuration's state; with `locked_for`, under the lock for that operation (held
    by someone else: the error apply gives, naming the directory to force-unlock from)."""
    from reconciler.checks import load_configuration
    from reconciler.workspace import hold_lock, open_state

    configuration = load_configuration(directory)
    backend = open_state(configuration)
    try:
        if must_exist and not backend.exists():
            raise PoolformError(
                # absolute: after --chdir the directory given is ".", the one moved into
                f"no state for {os.path.abspath(directory)} yet (nothing was applied from it)",
                hint="`poolform apply` creates it",
            )
        if not locked_for:
            yield backend
            return
        with hold_lock(backend, locked_for, parse_timeout(lock_timeout), configuration):
            yield backend
    finally:
        backend.close()


def _salvaged(backend: StateBackend) -> StateSnapshot:
    """The readable records; each damaged one named on stderr with the way out."""
    snapshot = backend.read_salvaged()
    warn_damaged(snapshot.damaged)
    return snapshot


@click.group()
def state() -> None:
    """Inspect and repair recorded state."""


@state.command("list")
@DIR_OPTION
def state_list(directory: Path) -> None:
    """Every recorded address."""
    with _backend(directory) as backend:
        snapshot = _salvaged(backend)
    for record in snapshot:
        click.echo(record.address)


@state.command("show")
@click.argument("address")
@DIR_OPTION
def state_show(address: str, directory: Path) -> None:
    """One recorded resource as JSON (sensitive values are salted hashes)."""
    from reconciler.usecases.showing import record_document

    with _backend(directory) as backend:
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

    with _backend(directory, locked_for="state rm", lock_timeout=lock_timeout) as backend:
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
            refusal = _jobs_refusal(
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


def _jobs_refusal(
    directory: Path, before: StateSnapshot, after: StateSnapshot, what: str, then: str
) -> PoolformError | None:
    """The scheduler reads the applied state: a pool or policy forgotten is gone for it, and
    the jobs on it are stopped or rejected at its next cycle, as after an apply deleting it."""
    from reconciler.checks import load_configuration
    from reconciler.usecases.job_impact import jobs_a_state_edit_affects

    notes, unread = jobs_a_state_edit_affects(load_configuration(directory), before, after)
    if unread:
        click.echo(f"warning: {unread}", err=True)
    if not notes:
        return None
    return PoolformError(
        f"{what} would change the scheduler's jobs (it reads the state: for it, a forgotten "
        f"object is gone, as a deleted one): {'; '.join(notes)}; nothing was changed",
        hint=f"let those jobs end, or cancel them (`poolform jobs cancel ID...`), {then}",
    )


@state.command("pull")
@DIR_OPTION
def state_pull(directory: Path) -> None:
    """The whole state as JSON on stdout (never the salt: only a value that identifies it)."""
    from state import StateError
    from state.jsonformat import snapshot_to_json

    with _backend(directory) as backend:
        snapshot = _salvaged(backend)
        try:
            salt: str | None = backend.salt(snapshot.lineage)
        except StateError:
            salt = None  # a layout-1 state whose secret is missing: pull what there is
    click.echo(json.dumps(snapshot_to_json(snapshot, salt=salt), indent=2, sort_keys=True))


def _has_sensitive(snapshot: StateSnapshot) -> bool:
    from state.sqlite import SENSITIVE_MARK

    return any(SENSITIVE_MARK in json.dumps(record.attributes) for record in snapshot)


@state.command("push")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False, allow_dash=True))
@DIR_OPTION
@click.option(
    "--force",
    is_flag=True,
    help="Accept another lineage, an older serial, another salt, or the scheduler's jobs it "
    "would stop or reject.",
)
@lock_timeout_option
def state_push(file: Path, directory: Path, force: bool, lock_timeout: str) -> None:
    """Replace the state with FILE (from `state pull`; `-`: standard input), every record
    checked first."""
    from state.jsonformat import parse_document, salt_check, snapshot_from_json

    text = _read_state_document(file)
    if str(file) == "-":
        file = Path("<stdin>")  # as messages name it
    if not text.strip():
        raise PoolformError(f"{file} is empty: nothing was pushed", hint=PULL_HINT)
    document = parse_document(text, str(file))
    snapshot = snapshot_from_json(document)
    pushed_check = document.get("salt_check") if isinstance(document, dict) else None
    with _backend(
        directory, must_exist=False, locked_for="state push", lock_timeout=lock_timeout
    ) as backend:
        if backend.exists():
            stored = backend.read_salvaged()
            current = stored.lineage
            if not force:
                _refuse_another_state(file, snapshot, stored)
                refusal = _jobs_refusal(
                    directory, stored, snapshot, f"pushing {file}",
                    "then push again (or pass --force)",
                )  # fmt: skip
                if refusal is not None:
                    raise refusal
            ours = salt_check(backend.salt(current)) if snapshot.lineage == current else None
            differs = pushed_check is not None and ours is not None and pushed_check != ours
            if differs and _has_sensitive(snapshot) and not force:
                raise _salt_refusal(file)
            serial = backend.replace_all(snapshot, force=force)
        else:
            if _has_sensitive(snapshot) and not force:
                raise _salt_refusal(file)
            from state.fresh import new_salt

            backend.adopt(snapshot, salt=new_salt(), history=(), objects=())
            serial = snapshot.serial
    click.echo(f"Pushed {len(snapshot)} resources; the state is now at serial {serial}.")


PULL_HINT = "push what `poolform state pull` printed, edited or not"
# Far above any state (10,000 resources pull to about 20 MB), low enough that `state push -`
# fed without end, or a device named by mistake, ends with an error, not with the memory.
MAX_STATE_BYTES = 1 << 30


def _read_state_document(file: Path) -> str:
    import stat

    raw = b""
    try:
        if str(file) == "-":
            file = Path("<stdin>")  # as the messages after it name it
            raw = standard_input_bytes(MAX_STATE_BYTES + 1)
        else:
            # Opened without waiting: a FIFO would block the open itself until a writer came.
            fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
            with os.fdopen(fd, "rb") as handle:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise PoolformError(f"{file}: not a state document: not a regular file")
                raw = handle.read(MAX_STATE_BYTES + 1)
        if len(raw) > MAX_STATE_BYTES:
            raise PoolformError(f"{file}: not a state document: over 1 GiB")
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PoolformError(
            f"{file}: not a state document: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at "
            f"offset {exc.start})",
            hint=PULL_HINT,
        ) from None
    except FileNotFoundError:  # named as every command names a missing path (with --chdir's hint)
        raise PathNotFound(str(file)) from None
    except OSError as exc:  # in the system's words, not Python's `[Errno 6] ... '/dev/tty'`
        raise PoolformError(
            f"{file} cannot be read ({exc.strerror or exc}); nothing was pushed"
        ) from None


def _refuse_another_state(file: Path, pushed: StateSnapshot, stored: StateSnapshot) -> None:
    """The backend refuses these too; said here in the terms of the file and of --force."""
    if pushed.lineage != stored.lineage:
        raise PoolformError(
            f"{file} is the state of lineage {pushed.lineage}, not this state's "
            f"({stored.lineage}): another configuration's state, or an earlier one of this "
            "directory; nothing was pushed",
            hint="pass --force to replace this state and every record in it with the file's",
        )
    if pushed.serial < stored.serial:
        raise PoolformError(
            f"{file} is at serial {pushed.serial}, older than this state (serial "
            f"{stored.serial}): changes were recorded since it was pulled; nothing was pushed",
            hint="`poolform state pull` again and make the edit there, or pass --force to "
            "replace what was recorded since",
        )


def _salt_refusal(file: Path) -> PoolformError:
    return PoolformError(
        f"{file} holds sensitive values hashed with another state's secret salt, which "
        "`state pull` never exports: pushed here, every resource with a sensitive value would "
        "plan a replacement",
        hint="move a state with `poolform state migrate --to URL`, which carries the salt "
        "(or pass --force to accept the replacements)",
    )


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


@click.command("force-unlock")
@click.argument("lock_id")
@DIR_OPTION
def force_unlock(lock_id: str, directory: Path) -> None:
    """Release a lock its holder abandoned (check it is really gone first)."""
    from state.errors import lock_is_stale

    if not lock_id.strip():  # a script's empty variable: "lock  was released" said nothing
        raise PoolformError(
            "the lock ID is empty",
            hint="give the ID a refused command printed with the lock's holder "
            "(`poolform force-unlock ID`)",
        )
    with _backend(directory, must_exist=False) as backend:
        held = backend.current_lock()
        if held is None:
            # Named by its backend: with --chdir the directory is ".", and a team state is
            # not in it. Nothing holds it: released by its holder, by an earlier force-unlock,
            # or, on a backend that frees a dead holder's lock, with the holder's end.
            frees = "; a dead holder's lock is freed by itself here" * backend.frees_dead_holder
            raise PoolformError(
                f"the state at {backend.location} is not locked (lock {lock_id} was released, "
                f"or never taken){frees}; nothing to unlock"
            )
        backend.force_unlock(lock_id)
    gone = "; its process was gone" if lock_is_stale(held) else ""
    click.echo(
        f"Released the state lock {held.lock_id}, taken by {held.who} (pid {held.pid} on "
        f"{held.host}) for `{held.operation}` at {held.created}{gone}."
    )


def _count(number: int, one: str, many: str | None = None) -> str:
    return f"{number} {one if number == 1 else many or one + 's'}"
