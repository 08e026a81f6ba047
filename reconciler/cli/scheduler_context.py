"""Where a job command works: the configuration directory it finds, and the scheduler's store
and executor beside that configuration's applied state (or in its PostgreSQL team state)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.errors import PoolformError

if TYPE_CHECKING:
    from reconciler.loading import Configuration
    from reconciler.scheduler.context import SchedulerContext
    from reconciler.scheduler.store import SchedulerStore
    from state import StateSnapshot


def configuration_dir(directory: Path | None, near: Path | None = None) -> Path:
    """--dir, or the nearest directory holding poolform state, from the job file's directory
    (then the current one) upwards; the current directory when there is none."""
    if directory is not None:
        return directory
    starts = ([_real(near).parent] if near is not None else []) + [Path.cwd()]
    for start in starts:
        for candidate in (start, *start.parents):
            if (candidate / ".poolform").is_dir():
                return candidate
    return Path(".")


def _real(path: Path) -> Path:
    """`path` with its links followed; as given (made absolute) when they cannot be, such as
    a link that loops: reading the job file then says what is wrong with it."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a loop, on Python 3.11 and 3.12
        return path.absolute()


def job_context(
    directory: Path | None,
    near: Path | None = None,
    *,
    submitting: bool = False,
    pass_env: Sequence[str] = (),
) -> SchedulerContext:
    """The scheduler's store and executor beside the configuration's state, reading state
    through one consistent read per call (no lock, no serial change)."""
    from reconciler.checks import load_configuration
    from reconciler.scheduler.context import STORE_NAME, open_context
    from reconciler.workspace import open_state, state_path

    where = configuration_dir(directory, near).resolve()
    configuration = load_configuration(where)
    # A job command never writes where nothing was applied: a `.poolform/` made there would
    # be taken for that directory's state next time.
    if configuration.declares_nothing and near is not None and not _named(directory):
        # Searched from the job file's directory too: naming only the current directory told
        # someone who had not applied yet that their configuration did not exist.
        from reconciler.printable import printable

        raise PoolformError(
            f"no applied configuration for {printable(str(near))}: no .poolform/ in its "
            f"directory or above, nor in {printable(str(where))} or above",
            hint="apply the configuration the job is for first (`poolform apply DIR`), or name "
            "it with --chdir DIR",
        )
    if configuration.declares_nothing:
        raise PoolformError(
            f"{where} holds no poolform configuration (no *.yaml files, no .poolform/ in it "
            "or above)",
            hint="run job commands in the configuration's directory, or name it with --chdir DIR",
        )
    path = state_path(configuration)
    backend = configuration.cluster.state.backend
    # A queue already there (the state moved away, a volume not mounted) is still watched and
    # listed; a job is only submitted against applied pools.
    queue_there = backend != "postgres" and (path.parent / STORE_NAME).exists()
    if backend != "postgres" and (submitting or not queue_there):
        # An S3 state that cannot be read (no such bucket, moved away) is named here: the
        # queue this would make beside it would then pass for the configuration's.
        applied = path.exists() if backend == "sqlite" else state_applied(configuration, True)
        if not applied:
            raise nothing_applied(where)

    def read_state() -> StateSnapshot | None:
        if configuration.cluster.state.backend == "sqlite" and not path.exists():
            return None
        backend = open_state(configuration)
        try:
            return backend.read()
        finally:
            backend.close()

    store = team_store(configuration, where, submitting)
    return open_context(path.parent, read_state, store=store, pass_env=pass_env)


def _named(directory: Path | None) -> bool:
    """Whether the command line named the configuration's directory (--dir, --chdir)."""
    import click

    from reconciler.cli.global_options import CHDIR

    context = click.get_current_context(silent=True)
    return directory is not None or bool(context and context.find_root().meta.get(CHDIR))


def nothing_applied(where: Path) -> PoolformError:
    return PoolformError(
        f"nothing has been applied in {where} yet: it has no pools for jobs",
        hint=f"run `poolform apply {where}` first, or name the configuration's "
        "directory with --chdir DIR",
    )


def state_applied(configuration: Configuration, unreadable_is_error: bool = False) -> bool:
    """Whether the configuration's (team) state exists. A state that cannot be read is left
    to the command's own reading of it, which names what is wrong, unless
    `unreadable_is_error` (the command may not read it before it writes)."""
    from reconciler.workspace import open_state
    from state.errors import StateError

    try:
        backend = open_state(configuration)
    except (StateError, PoolformError):
        if unreadable_is_error:
            raise
        return True
    try:
        return backend.exists()
    except StateError:
        if unreadable_is_error:
            raise
        return True
    finally:
        backend.close()


def team_store(
    configuration: Configuration, where: Path, submitting: bool
) -> SchedulerStore | None:
    """On a PostgreSQL state, the scheduler's store is there too: one queue for every machine.
    Its tables are made with the first job command after an apply, never where nothing was
    applied (a job command there says so and writes nothing)."""
    from reconciler.workspace import state_location

    location = state_location(configuration)
    if location.backend != "postgres":
        return None
    from reconciler.scheduler.postgres_store import NoQueue, PostgresStore

    try:
        store = PostgresStore(location.dsn, schema=location.schema, create=False)
    except NoQueue:
        if not state_applied(configuration):
            raise nothing_applied(where) from None
        return PostgresStore(location.dsn, schema=location.schema)
    if submitting and not state_applied(configuration):
        store.close()
        raise nothing_applied(where)
    return store
