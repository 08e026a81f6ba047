"""version and completion: what poolform is, and finishing its commands in a shell."""

from __future__ import annotations

import json
import platform
import sys
from importlib import util

import click

from reconciler.cli.common import echo_json_document

# The formats poolform reads and writes, by what they are: a script can check them.
FORMATS = {"plan_json": "1.0", "drift_json": "1.0", "apply_events": "1.0", "plan_file": 3}
# The optional extras, by the module each one installs.
EXTRAS = {"aws": "botocore", "gcp": "google.cloud.compute_v1", "postgres": "psycopg"}
SHELLS = ("bash", "zsh", "fish")


def _installed(module: str) -> bool:
    try:
        return util.find_spec(module) is not None
    except ModuleNotFoundError:  # a parent package is missing
        return False


@click.command(short_help="Show poolform's version and which extras are installed.")
@click.option(
    "--json", "as_json", is_flag=True, help="As JSON, for scripts, with the formats' versions."
)
def version(as_json: bool) -> None:
    """Show the version of poolform, the Python it runs on, and which optional extras (aws,
    gcp, postgres) are installed; --json adds the versions of the formats it reads and writes
    (plan and drift JSON, apply events, plan files)."""
    from importlib import metadata  # here: its import costs every other command ~20 ms

    number = metadata.version("poolform")
    extras = {name: _installed(module) for name, module in EXTRAS.items()}
    if as_json:
        echo_json_document(
            json.dumps(
                {
                    "version": number,
                    "python": platform.python_version(),
                    "formats": FORMATS,
                    "extras": extras,
                },
                sort_keys=True,
            )
        )
        return
    click.echo(f"poolform {number}")
    click.echo(f"python {platform.python_version()} on {sys.platform}")
    present = ", ".join(
        f"{name} {'installed' if ok else 'not installed'}" for name, ok in extras.items()
    )
    click.echo(f"extras: {present}")


@click.command(short_help="Print the shell completion script for bash, zsh or fish.")
@click.argument("shell", type=click.Choice(SHELLS))
@click.pass_context
def completion(ctx: click.Context, shell: str) -> None:
    """Print the script that completes poolform's commands, options and arguments in SHELL.

    \b
    bash:  eval "$(poolform completion bash)"      (in ~/.bashrc)
    zsh:   eval "$(poolform completion zsh)"       (in ~/.zshrc)
    fish:  poolform completion fish > ~/.config/fish/completions/poolform.fish
    """
    from click.shell_completion import get_completion_class

    complete = get_completion_class(shell)
    assert complete is not None  # click ships all three
    root = ctx.find_root().command
    click.echo(complete(root, {}, "poolform", "_POOLFORM_COMPLETE").source())
