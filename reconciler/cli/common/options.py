"""The arguments and options several commands take, their parsing, and the terminal prompt."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path

import click

from reconciler.errors import (
    PoolformError,
)
from reconciler.printable import one_line, printable

DIR = click.argument("directory", type=click.Path(path_type=Path), default=".", required=False)

lock_timeout_option = click.option(
    "--lock-timeout",
    default="0s",
    show_default=True,
    metavar="DURATION",
    help="How long to wait for the state lock held by another run (e.g. 30s, 2m, 1m30s).",
)

lock_option = click.option(
    "--lock/--no-lock",
    default=True,
    show_default=True,
    help="Hold the state lock while reading state. --no-lock (Terraform's -lock=false) reads "
    "without it, for credentials that may only read: a plan saved then is still refused by "
    "apply if the state has moved since.",
)


def utf8_text(_ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A click callback for a name or ID argument (not a path): bytes that are not UTF-8,
    which the OS hands over as they are, can name nothing poolform keeps; say so, exit 1."""
    if value is not None:
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise click.BadParameter(
                f"{printable(value)} is not UTF-8 text, so it names nothing", param=param
            ) from None
    return value


def warn_damaged(damaged: Mapping[str, str]) -> None:
    """Name each damaged record on stderr with the way out. Its address is read from the
    damaged store itself, so it is escaped: a record edited to hold a terminal sequence or a
    newline must not clear the screen or forge a line."""
    for address, why in damaged.items():
        shown = one_line(address)
        click.echo(
            f"warning: the record of {shown} is damaged ({one_line(why)}); it is left out. "
            f"`poolform state rm {shown}` forgets it (then `poolform import` takes the "
            "resource back)",
            err=True,
        )


def parse_timeout(text: str) -> float:
    """A `--lock-timeout`: a duration as the configuration takes them (`30s`, `2m`, `1m30s`),
    or a bare number of seconds, in ASCII digits (numbers.py)."""
    from reconciler.cli.numbers import ascii_decimal
    from schemas.quantities import parse_duration

    try:
        return float(parse_duration(float(text) if ascii_decimal(text) else text))
    except ValueError as exc:
        raise PoolformError(f"--lock-timeout: {exc}") from None


def lock_wait(lock_timeout: str, lock: bool) -> float:
    """A reading command's `--lock-timeout`, parsed. With `--no-lock` no lock is waited for, so
    a timeout given with it is one the user believes protects the read (a CI step copied from
    an apply's): say it does nothing rather than ignore it silently."""
    wait = parse_timeout(lock_timeout)
    source = click.get_current_context().get_parameter_source("lock_timeout")
    if not lock and source is not click.core.ParameterSource.DEFAULT:
        click.echo(
            f"warning: --lock-timeout {one_line(lock_timeout)} does nothing with --no-lock "
            "(Terraform's -lock=false): no lock is taken, so none is waited for",
            err=True,
        )
    return wait


NO_TERMINAL_HINTS = {
    "apply": "review with `poolform plan -out FILE`, then apply exactly that plan with "
    "`poolform apply FILE` (or pass --auto-approve)",
    "destroy": "review with `poolform plan --destroy -out FILE`, then apply exactly that plan "
    "with `poolform apply FILE` (or pass --auto-approve)",
    "apply --refresh-only": "review with `poolform plan --refresh-only`, then pass --auto-approve",
}


def standard_input_bytes(limit: int) -> bytes:
    """At most `limit` bytes of standard input (`fmt -`, `state push -`). A process started
    with it closed (`<&-`, some daemons) has none: said so, not "internal error"."""
    if sys.stdin is None:
        raise PoolformError("standard input is closed, so `-` has nothing to read")
    return sys.stdin.buffer.read(limit)


def terminal_confirm(auto_approve: bool, command: str = "apply") -> Callable[[str], bool]:
    """The `confirm` a use case asks: yes with --auto-approve, else only a typed `yes` on a
    terminal (anything else, `y` included, cancels). Without a terminal there is no one to
    ask: an error that says how `command` is run unattended."""

    def confirm(question: str) -> bool:
        if auto_approve:
            return True
        if sys.stdin is None or not sys.stdin.isatty():  # None: started with stdin closed
            raise PoolformError(
                f"`poolform {command}` needs confirmation to {question}, and there is no "
                "terminal to ask on",
                hint=NO_TERMINAL_HINTS.get(command, "pass --auto-approve"),
            )
        answer = click.prompt(
            f"\nDo you want to {question}? Only 'yes' will be accepted",
            default="",
            show_default=False,
        ).strip()
        if answer != "yes" and answer.lower() in ("y", "ye", "yes", "yeah", "ok"):
            click.echo(f"Only 'yes' is accepted, not {answer!r}.", err=True)
        return bool(answer == "yes")

    return confirm
