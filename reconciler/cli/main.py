"""`poolform`: the command group. Each command module parses its arguments, calls a use case
(reconciler/usecases), and renders the result; errors become messages and exit codes in one
place (reconciler/cli/common/exit_codes.py). Terraform's spellings are rewritten before parsing
(spellings.py); `--chdir` and `--no-color` are given to every command (global_options.py)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence

import click

from reconciler.cli.about_commands import completion, version
from reconciler.cli.apply_commands import apply, destroy
from reconciler.cli.common import (
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_TERMINATED,
    Terminated,
    exit_code_for,
    forget_json_output,
    tell_json_error,
)
from reconciler.cli.config_commands import effective, fmt, schema, validate
from reconciler.cli.drift_commands import drift
from reconciler.cli.global_options import everywhere, forget_chdir
from reconciler.cli.held_signals import release_signals
from reconciler.cli.import_commands import import_, local
from reconciler.cli.plan_commands import graph, plan, show
from reconciler.cli.scheduler_commands import jobs, pools, scheduler
from reconciler.cli.spellings import terraform_spellings
from reconciler.cli.state_commands import force_unlock, state
from reconciler.cli.stdout_guard import guard_stdout

# Terraform commands poolform has no need of, and what a Terraform user does here instead:
# click's "No such command 'init'" left them looking for the step they had missed.
TERRAFORM_ONLY = {
    "init": "poolform has no init: its providers are built in and the first apply makes the "
    "state; run `poolform plan`",
    "refresh": "poolform has no refresh: `poolform apply --refresh-only` accepts what changed "
    "into state (as `terraform apply -refresh-only`), `poolform drift` only reports it",
    "taint": "poolform has no taint: `poolform plan --replace ADDR` (then apply) replaces one "
    "resource, as `terraform plan -replace`",
}


class PoolformGroup(click.Group):
    """The command group, reading Terraform's spellings as poolform's."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, terraform_spellings(args))

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else None
        if name in TERRAFORM_ONLY and self.get_command(ctx, name) is None:
            if ctx.resilient_parsing:  # completing the line: no error, as click does
                return None, None, args
            raise click.UsageError(TERRAFORM_ONLY[name], ctx)
        return super().resolve_command(ctx, args)


@click.group(
    cls=PoolformGroup,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.version_option(package_name="poolform", prog_name="poolform")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Declare shared GPU and compute capacity in YAML and reconcile it like Terraform."""
    ctx.obj = {"debug": debug}


cli.add_command(validate)
cli.add_command(fmt)
cli.add_command(schema)
cli.add_command(effective)
cli.add_command(plan)
cli.add_command(show)
cli.add_command(graph)
cli.add_command(apply)
cli.add_command(destroy)
cli.add_command(drift)
cli.add_command(state)
cli.add_command(force_unlock)
cli.add_command(import_)
cli.add_command(local)
cli.add_command(jobs)
cli.add_command(pools)
cli.add_command(scheduler)
cli.add_command(version)
cli.add_command(completion)
everywhere(cli)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    started_in = os.getcwd()  # --chdir moves the process; a caller of main() gets it back
    try:
        try:
            result = cli.main(args=args, prog_name="poolform", standalone_mode=False)
        finally:
            release_signals()  # a Ctrl-C held while a --json document was written ends it now
    except BaseException as error:  # the last boundary: never a bare traceback
        if isinstance(error, SystemExit):
            raise
        tell_json_error(args, error)  # with --json, stdout has something to parse too
        return exit_code_for(error, debug="--debug" in args)
    finally:
        os.chdir(started_in)
        forget_chdir()
        forget_json_output()
    return result if isinstance(result, int) else EXIT_OK


def _terminated(signum: int, _frame: object) -> None:
    """SIGTERM (a CI job cancelled, a container stopped) ends a command as Ctrl-C does: an
    apply's changes in flight finish, are recorded and reported, and the state lock is
    released. Python's default ended the process at once, leaving changes made but not
    recorded, a `start` event with no end, and the lock to be taken over. It exits 143
    (128 + SIGTERM, as a shell reports it), not Ctrl-C's 130."""
    raise Terminated


def entrypoint() -> None:
    guard_stdout()  # a stdout that cannot be written fails the command (stdout_guard.py)
    signal.signal(signal.SIGTERM, _terminated)  # `scheduler run` installs its own meanwhile
    try:
        code = main()
    except KeyboardInterrupt as again:  # a second signal while the first was being reported
        code = EXIT_TERMINATED if isinstance(again, Terminated) else EXIT_INTERRUPTED
    finally:
        # The run is over and reported: a Ctrl-C now (while the interpreter joins threads and
        # closes files) would make it die by SIGINT, with no message.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    sys.exit(code)


if __name__ == "__main__":
    entrypoint()
