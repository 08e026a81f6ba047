"""Where a configuration's state lives, and opening it and its provider: the I/O edge the use
cases stand on. The one place backends are chosen."""

from __future__ import annotations

import math
import os
import shlex
from collections.abc import Iterator
from contextlib import ExitStack, closing, contextmanager
from pathlib import Path

from providers.protocol import Provider
from reconciler.errors import PoolformError
from reconciler.loading import Configuration
from state import StateBackend, StateError, StateSnapshot
from state.location import Location, open_location, postgres_dsn
from state.model import LockInfo
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


def local_cloud_dir(location: Location, configuration: Configuration) -> Path:
    """Where the local provider keeps its cloud while the state is at `location`: beside a
    SQLite state, else in the configuration's default state directory (as open_provider),
    links resolved (a link to the state file is that state)."""
    if location.backend == "sqlite" and location.path is not None:
        return Path(location.path).resolve().parent
    return default_state_path(Path(configuration.directory).resolve()).parent


def refuse_leaving_the_local_cloud(
    configuration: Configuration, source: Location, target: Location
) -> None:
    """PoolformError when moving a local-provider state from `source` to `target` would leave
    its cloud behind: with the state at `target`, the provider would open a new, empty cloud
    beside it and plan every recorded resource again, while the old ones keep running."""
    from providers.local.admin import holdings

    if configuration.cluster.provider != "local":
        return
    here, there = local_cloud_dir(source, configuration), local_cloud_dir(target, configuration)
    if here == there or not holdings(here):
        return
    raise PoolformError(
        f"the local provider's cloud is in {here}, beside the state: with the state at "
        f"{target.describe()} it would be looked for in {there}, and every resource would be "
        "planned again in a new, empty cloud while the ones in "
        f"{here} keep running",
        hint=f"keep the state in {here} (a SQLite path there), where the cloud is",
    )


def nothing_carries(snapshot: StateSnapshot) -> bool:
    """True for a state no create ever started from: nothing in any cloud carries its lineage,
    so there is nothing to refresh (and no provider to open, which may create files)."""
    return snapshot.serial == 0 and not snapshot.resources and not snapshot.intents


def local_cloud_absent(configuration: Configuration) -> bool:
    """True when the provider is the local one and its cloud was never made where
    open_provider would open it (opening it makes its files)."""
    return (
        configuration.cluster.provider == "local"
        and not (state_path(configuration).parent / "local-cloud.db").is_file()
    )


def local_cloud_empty(configuration: Configuration) -> bool:
    """True when the provider is the local one and its cloud (where open_provider opens it)
    holds no group or object, or is not there at all: nothing can be found in it, and opening
    it would make its files for nothing."""
    if configuration.cluster.provider != "local":
        return False
    from providers.local.admin import holdings

    return holdings(state_path(configuration).parent) == 0


def open_provider(configuration: Configuration, backend: StateBackend | None = None) -> Provider:
    """The Cluster's provider (local by default), imported only now. AWS and GCP keep their
    control-plane objects in the state backend: ``backend`` when given (a command that writes
    passes the one it holds the lock on), else one opened here and closed with the provider."""
    from providers.registry import get_provider

    cluster = configuration.cluster
    control = None
    if cluster.provider in ("aws", "gcp"):
        from providers.control_plane import StoredControlPlane

        store = backend if backend is not None else open_state(configuration)
        _adopt_embedded_objects(state_path(configuration).parent, store)
        control = StoredControlPlane(store, on_close=None if backend is not None else store.close)
    return get_provider(
        cluster.provider,
        cluster.provider_settings,
        state_path(configuration).parent,
        region=cluster.region,
        control=control,
    )


def _adopt_embedded_objects(state_dir: Path, store: StateBackend) -> None:
    """Before the backend kept them, the AWS and GCP providers kept control-plane objects in the
    local cloud database beside the state: bring them over once, so none is planned again."""
    import json
    import sqlite3

    from state import ControlObject

    embedded = state_dir / "local-cloud.db"
    if not embedded.exists() or not store.exists() or store.all_objects():
        return
    try:
        # mode=rw with query_only, not mode=ro, which leaves the WAL files it makes behind
        with closing(sqlite3.connect(f"file:{embedded}?mode=rw", uri=True)) as db:
            db.execute("PRAGMA query_only=ON")
            rows = db.execute(
                "SELECT id, address, lineage, resource_type, attributes, tags FROM objects"
            ).fetchall()
    except sqlite3.Error:
        return  # no objects table: nothing was kept there
    for object_id, address, lineage, resource_type, attributes, tags in rows:
        store.put_object(
            ControlObject(
                object_id, address, lineage, resource_type, json.loads(attributes), json.loads(tags)
            )
        )


def read_state(configuration: Configuration, operation: str, lock_timeout: float) -> StateSnapshot:
    """One read of state, under the lock for its duration so no apply is seen half-way."""
    backend = open_state(configuration)
    try:
        with hold_lock(backend, operation, lock_timeout, configuration):
            return backend.read()
    finally:
        backend.close()


def read_state_for_reading(
    configuration: Configuration, operation: str, lock_timeout: float, *, lock: bool
) -> tuple[StateSnapshot, LockInfo | None]:
    """The read of a command that changes nothing (plan, drift, graph): under the lock, or,
    with `lock=False` (`--no-lock`, Terraform's `-lock=false`), by credentials that may not
    write, which the lock is. Every backend reads one consistent version (a transaction; on
    S3 a snapshot and the journal after it, read again from the head when a fold meets it:
    state/s3_reading.py), at worst one an apply running now has since moved past; a saved plan made
    from it is refused by `apply` then, as any stale plan is (its serial no longer matches).
    The second value: the run that changed state as it was read without the lock (see
    `read_state_unlocked`)."""
    if lock:
        return read_state(configuration, operation, lock_timeout), None
    return read_state_unlocked(configuration)


def read_state_unlocked(configuration: Configuration) -> tuple[StateSnapshot, LockInfo | None]:
    """`--no-lock`'s read, and the run that held the lock as it began (None: none, or none
    that changes state, or the lock could not be looked at): while such a run goes on, the
    state read is one version part-way through its changes, and a refresh meets its cloud
    changes before they are recorded."""
    from state.errors import StateError

    backend = open_state(configuration)
    try:
        try:
            holder = backend.current_lock()
        except StateError:
            holder = None
        if holder is not None and holder.operation in READ_ONLY_OPERATIONS:
            holder = None
        return backend.read(), holder
    finally:
        backend.close()


def changing_run_warning(holder: LockInfo, what: str = "plan") -> str:
    """The warning of a plan (or drift report) read without the lock while `holder` was
    changing the state."""
    saved = (
        ". A plan saved now is refused by apply once that run has moved the state on"
        if what == "plan"
        else ""
    )
    return (
        f"the state was locked by {holder.who} (pid {holder.pid} on {holder.host}) for "
        f"`{holder.operation}` since {holder.created} while this {what} read it without the "
        "lock: it may show that run's changes half-made (one made in the cloud but not yet "
        f"recorded reads as changed outside poolform); run it again once that run has "
        f"ended{saved}"
    )


@contextmanager
def hold_lock(
    backend: StateBackend, operation: str, timeout: float, configuration: Configuration
) -> Iterator[None]:
    """The state lock for the body (state.lock_state). Held by someone else, it is an error
    that says who holds it and how to wait for it or remove it, naming the configuration's
    directory: `force-unlock` run anywhere else would look at another state."""
    from state.errors import StateForbidden, StateLocked, lock_is_stale
    from state.locking import lock_state

    with ExitStack() as held:
        try:
            held.enter_context(lock_state(backend, operation, timeout))
        except StateLocked as locked:
            raise locked_error(
                locked.holder,
                configuration,
                lock_is_stale(locked.holder),
                locked.detail,
                waited=timeout,
                lease_left=locked.lease_left,
            ) from None
        except StateForbidden as refused:
            if operation not in READ_ONLY_OPERATIONS:
                raise
            raise PoolformError(
                f"{refused.refused}; taking the state lock is a write, which these "
                "credentials may not make",
                hint=f"`poolform {operation} --no-lock` reads the state without the lock "
                "(Terraform's -lock=false), for credentials that may only read it",
            ) from None
        yield


# The commands that read state and change nothing, which may read it without the lock.
READ_ONLY_OPERATIONS = frozenset({"plan", "drift", "graph"})


def locked_error(
    holder: LockInfo,
    configuration: Configuration,
    stale: bool,
    detail: str = "",
    *,
    waited: float = 0.0,
    lease_left: float | None = None,
) -> PoolformError:
    """The refusal for the configuration's own state held by another run: who holds it, how to
    wait for the lock and how to break it (force-unlock, with the directory it must run for).
    After a wait (`--lock-timeout`) ran out, it says so and does not suggest the option the
    user gave: a longer one, at most."""
    where = f"--chdir {shlex.quote(os.path.abspath(configuration.directory))}"
    held = (
        f"{holder.who} (pid {holder.pid} on {holder.host}) since {holder.created}, for "
        f"`{holder.operation}` (lock ID {holder.lock_id})"
    )
    message = (
        f"the state is locked by {held}"
        if waited <= 0
        else f"the state is still locked after waiting {_seconds(waited)} (--lock-timeout): "
        f"locked by {held}"
    )
    wait = "wait for it with --lock-timeout (e.g. --lock-timeout 2m); " if waited <= 0 else ""
    if configuration.cluster.state.backend == "s3":
        # A lease: a dead holder's runs out by itself, so no human is needed; say when.
        said = "that process is no longer running" if stale else ""
        lease = (
            "wait for it with --lock-timeout longer than the lease (e.g. --lock-timeout "
            f"{_covering(lease_left)}): "
            if waited <= 0
            else "a longer --lock-timeout than the lease waits it out: "
        )
        return PoolformError(
            "; ".join(part for part in (message, said, detail) if part),
            hint=f"{lease}a holder that died is taken over when its lease runs out; "
            f"`poolform force-unlock {holder.lock_id}` with {where} breaks it now",
        )
    if stale:
        return PoolformError(
            f"{message}; that process is no longer running",
            hint=f"the lock is stale: run `poolform force-unlock {holder.lock_id}` with {where}",
        )
    if configuration.cluster.state.backend not in ("postgres", "s3"):
        # An OS lock: it goes with its holder, and force-unlock refuses a live one.
        return PoolformError(
            message,
            hint=f"{wait}the lock frees itself when that process ends (stop it to end it sooner)",
        )
    return PoolformError(
        message,
        hint=f"{wait}a holder that died frees it by itself; if it hangs, "
        f"`poolform force-unlock {holder.lock_id}` with {where} breaks its lock",
    )


# The waits a hint suggests: a lease's time left rounded up to one of them, with a margin for
# the polls and requests of the wait itself (a lease may last up to an hour).
_SUGGESTED_WAITS = (120, 300, 600, 900, 1200, 1800, 2700, 3600, 5400, 7200)


def _covering(lease_left: float | None) -> str:
    """A --lock-timeout that outlasts an S3 lease with `lease_left` seconds to run: `2m` for
    the default 30 s lease (or one that does not say), `15m` for 599 s left, never less than
    the lease: a `2m` wait for a lease 10 minutes from running out ran out first."""
    need = (lease_left or 0.0) + 10.0
    return _seconds(next((s for s in _SUGGESTED_WAITS if s >= need), math.ceil(need / 60) * 60))


def _seconds(seconds: float) -> str:
    """`45s`, `2m`, `1m30s`, `0.5s`: a wait as --lock-timeout takes it."""
    if seconds != int(seconds) or seconds < 60:
        return f"{seconds:g}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest}s" if rest else f"{minutes}m"
