"""What the `state` commands share: the group, `--dir`, the state opened (under its lock
where a command writes), and the refusal of an edit that would change the scheduler's jobs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.common import parse_timeout, warn_damaged
from reconciler.errors import PoolformError

if TYPE_CHECKING:
    from state import StateBackend, StateSnapshot

DIR_OPTION = click.option(
    "--dir",
    "directory",
    type=click.Path(path_type=Path),
    default=".",
    show_default=True,
    help="The configuration directory.",
)


@contextmanager
def open_backend(
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


def salvaged(backend: StateBackend) -> StateSnapshot:
    """The readable records; each damaged one named on stderr with the way out."""
    snapshot = backend.read_salvaged()
    warn_damaged(snapshot.damaged)
    return snapshot


@click.group()
def state() -> None:
    """Inspect and repair recorded state."""


def jobs_refusal(
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
