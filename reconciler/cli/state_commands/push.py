"""state push: the whole state replaced with a document `state pull` printed, every record
checked first, and refused where it is another state's or older than this one."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.common import lock_timeout_option, standard_input_bytes
from reconciler.cli.state_commands.shared import DIR_OPTION, jobs_refusal, open_backend, state
from reconciler.errors import PathNotFound, PoolformError

if TYPE_CHECKING:
    from state import StateSnapshot


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
    with open_backend(
        directory, must_exist=False, locked_for="state push", lock_timeout=lock_timeout
    ) as backend:
        if backend.exists():
            stored = backend.read_salvaged()
            current = stored.lineage
            if not force:
                _refuse_another_state(file, snapshot, stored)
                refusal = jobs_refusal(
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
