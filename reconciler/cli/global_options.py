"""Options every command takes, wherever they are written: `--chdir DIR` and `--no-color`;
and command summaries shown whole in command lists.

Terraform takes `-chdir=DIR` before the command (`terraform -chdir=infra plan`); poolform takes
it there and after the command too (`poolform plan --chdir infra`), on every command. The process
then works as if started in DIR: relative paths in the arguments resolve against it, and the
configuration directory defaults to it. The CLI's `main` restores the working directory after
each run.

`--dir` on the commands that had it (state, import, force-unlock, local) still works, hidden
from help: `--chdir` is the one spelling for all commands.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from reconciler.errors import PoolformError

NO_COLOR = "poolform.no_color"


CHDIR = "poolform.chdir"

# Where the process was before --chdir moved it (one run at a time: main() clears it), so an
# error about a path that is missing in DIR can say it is relative to DIR when the user meant
# the file in the directory they started in.
_moved: list[tuple[str, str]] = []


def change_directory(ctx: click.Context, _: click.Parameter, values: tuple[Path, ...]) -> None:
    """Once per run: a second --chdir, in the same place or before and after the command,
    would move again relative to the first (or one would silently win), as Terraform, which
    takes -chdir once, never does."""
    if not values or ctx.resilient_parsing:
        return
    root = ctx.find_root()
    given = [*root.meta.get(CHDIR, ()), *values]
    if len(given) > 1:
        raise PoolformError(
            "--chdir is given more than once (" + ", ".join(map(str, given)) + ")",
            hint="give the directory once",
        )
    root.meta[CHDIR] = given
    (value,) = values
    started_in = os.getcwd()
    try:
        os.chdir(value)
    except OSError as exc:
        raise PoolformError(f"--chdir {value}: {exc.strerror or exc}") from None
    _moved[:] = [(started_in, str(value))]


def forget_chdir() -> None:
    _moved.clear()


def relative_to_chdir_hint(path: str) -> str | None:
    """For a path that is missing after --chdir DIR but names something where poolform was
    started: Terraform reads paths relative to -chdir, and so does poolform; say so and how
    to name that file from DIR."""
    if not _moved or os.path.isabs(path):
        return None
    started_in, directory = _moved[0]
    meant = os.path.join(started_in, path)
    if not os.path.lexists(meant):
        return None
    return (
        f"paths are relative to --chdir {directory}, as in Terraform; {path} is in the "
        f"directory poolform was started in: give it as {os.path.relpath(meant)} "
        f"(or {meant})"
    )


def remember_no_color(ctx: click.Context, _: click.Parameter, value: bool) -> None:
    if value:
        ctx.meta[NO_COLOR] = True


def chdir_option(**extra: Any) -> click.Option:
    return click.Option(
        ["--chdir"],
        metavar="DIR",
        type=click.Path(path_type=Path, file_okay=False),
        multiple=True,
        callback=change_directory,
        expose_value=False,
        is_eager=True,  # before any other argument is converted: they are relative to DIR
        help="Work in DIR, as if poolform were started there (Terraform's -chdir).",
        **extra,
    )


def no_color_option(**extra: Any) -> click.Option:
    return click.Option(
        ["--no-color"],
        is_flag=True,
        callback=remember_no_color,
        expose_value=False,
        help="No colour in the output (also: the NO_COLOR environment variable).",
        **extra,
    )


def _old_dir(callback: Any) -> Any:
    """The `--dir` option's callback, saying first that --chdir replaces it."""

    def warn(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        source = ctx.get_parameter_source(param.name or "")
        if source is click.core.ParameterSource.COMMANDLINE and not ctx.resilient_parsing:
            click.echo("warning: --dir is deprecated: use --chdir DIR (every command takes it)",
                       err=True)  # fmt: skip
        return callback(ctx, param, value) if callback is not None else value

    return warn


def color_disabled() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.meta.get(NO_COLOR))


def everywhere(root: click.Group) -> None:
    """Give `root` and every command below it the shared options (`--no-color` to the root
    and the commands that print, not to the groups between), and hide the old `--dir`."""
    for command in [root, *_commands(root)]:
        if not command.short_help and command.help:
            # Command lists show the whole first paragraph, never a summary cut at "...".
            command.short_help = " ".join(command.help.split("\n\n", 1)[0].split())
        names = {opt for param in command.params for opt in getattr(param, "opts", ())}
        if "--chdir" not in names:
            command.params.append(chdir_option())
        subgroup = isinstance(command, click.Group) and command is not root
        if "--no-color" not in names and not subgroup:
            command.params.append(no_color_option())
        for param in command.params:
            if isinstance(param, click.Option) and "--dir" in param.opts:
                param.hidden = True
                param.callback = _old_dir(param.callback)


def _commands(group: click.Group) -> list[click.Command]:
    found: list[click.Command] = []
    for command in group.commands.values():
        found.append(command)
        if isinstance(command, click.Group):
            found.extend(_commands(command))
    return found
