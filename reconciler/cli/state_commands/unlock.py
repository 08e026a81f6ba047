"""force-unlock: a state lock its holder abandoned, released."""

from __future__ import annotations

from pathlib import Path

import click

from reconciler.cli.state_commands.shared import DIR_OPTION, open_backend
from reconciler.errors import PoolformError


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
    with open_backend(directory, must_exist=False) as backend:
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
