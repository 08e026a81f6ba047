"""Where a configuration's state lives, and opening it: the one place backends are chosen."""

from __future__ import annotations

import os
from pathlib import Path

from reconciler.errors import PoolformError
from reconciler.loading import Configuration
from state import StateBackend, StateError, StateSnapshot
from state.location import Location, open_location, postgres_dsn
from state.sqlite import default_state_path


def state_path(configuration: Configuration) -> Path:
    """The SQLite state file, absolute: messages name it so that it can be found from anywhere
    (after `--chdir`, a relative path would be relative to a directory the user is not in)."""
    settings = configuration.cluster.state
    directory = Path(os.path.abspath(configuration.directory))
    if settings.path:
        path = Path(settings.path)
        return path if path.is_absolute() else directory / path
    return default_state_path(directory)


def state_location(configuration: Configuration) -> Location:
    """Where the Cluster's `state` settings put the state (SQLite beside it by default)."""
    settings = configuration.cluster.state
    if settings.backend == "postgres":
        try:
            dsn = postgres_dsn(settings.dsn)
        except StateError as exc:
            raise PoolformError(str(exc)) from None
        return Location("postgres", dsn=dsn, schema=settings.key or "poolform")
    if settings.backend == "s3":
        return Location(
            "s3",
            bucket=settings.bucket or "",
            prefix=settings.key or "poolform",
            region=settings.region,
            lease_seconds=settings.lease_seconds,
        )
    return Location("sqlite", path=state_path(configuration))


def open_state(configuration: Configuration, *, moving: bool = False) -> StateBackend:
    """The configuration's state backend, as the Cluster's `state` settings name it.

    Opening creates nothing: a state is created by the first command that writes to it. A
    local state left beside a configuration whose Cluster names a team backend is an error
    (unless `state migrate` moved it, or is ``moving`` it): two states for one configuration
    would fork."""
    location = state_location(configuration)
    if not moving:
        _refuse_local_state(configuration, location)
    return open_location(location, directory=str(configuration.directory))


def _refuse_local_state(configuration: Configuration, location: Location) -> None:
    """A state left where the configuration kept it before its Cluster's `state` settings
    changed: a team backend, or another SQLite `path` (edited without `state migrate`, the
    plan created everything again beside the new path, the local provider in a new cloud)."""
    from state.errors import StateMoved
    from state.sqlite import SqliteStore

    if location.backend == "sqlite":
        if not configuration.cluster.state.path or location.path is None:
            return  # the default place: the state is there or nowhere
        local = default_state_path(Path(os.path.abspath(configuration.directory)))
        if _same_file(local, location.path):
            return
    else:
        local = state_path(configuration)
    if not local.exists():
        return
    try:
        with SqliteStore(local) as store:
            records = len(store.read_salvaged())
    except StateMoved:
        return  # moved to the team backend: what it should be
    except StateError as exc:
        records_text = f"unreadable: {exc}"
    else:
        records_text = f"{records} resources"
    hint = (
        f"move it there with `poolform state migrate --from {local}`, or, if it is stale, "
        "move it out of the way"
    )
    if location.backend == "sqlite" and configuration.cluster.provider == "local":
        hint = (
            f"the local provider keeps its cloud beside that state ({local.parent}): remove "
            "the Cluster's state `path` to go on with it, or, if it is stale, move it out of "
            "the way"
        )
    raise PoolformError(
        f"the Cluster keeps its state in {location.backend} at {location.describe()}, but a "
        f"local state is still at {local} ({records_text})",
        hint=hint,
    )


def _same_file(one: Path, other: Path) -> bool:
    """The same state file, through links or `..` (a link to the state file is that state)."""
    # realpath, not Path.resolve: a looping link is named by the state's own checks, not
    # raised here as a RuntimeError
    return os.path.realpath(one) == os.path.realpath(os.path.abspath(other))


def secret_salt(configuration: Configuration, lineage: str) -> str:
    """The secret that salts hashes of sensitive values, kept in the state backend (never in a
    plan or in `state pull`), so a plan's JSON gives nothing to guess a short secret against."""
    backend = open_state(configuration)
    try:
        return backend.salt(lineage)
    finally:
        backend.close()


def pin_state(configuration: Configuration, lineage: str) -> None:
    """A saved plan names the state it was made from: when that state was absent (read as a
    new one), create it now with the plan's lineage and salt, so `apply PLANFILE` finds it."""
    from state.fresh import fresh_salt

    salt = fresh_salt(lineage)
    backend = open_state(configuration)
    try:
        if salt is not None and not backend.exists():
            from state import StateSnapshot

            backend.adopt(StateSnapshot(lineage, 0), salt=salt, history=(), objects=())
    finally:
        backend.close()


def nothing_carries(snapshot: StateSnapshot) -> bool:
    """True for a state no create ever started from: nothing in any cloud carries its lineage,
    so there is nothing to refresh (and no provider to open, which may create files)."""
    return snapshot.serial == 0 and not snapshot.resources and not snapshot.intents
