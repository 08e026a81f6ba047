"""`poolform`: the command group. Each command module parses its arguments, calls a use case
(reconciler/usecases), and renders the result; errors become messages and exit codes in one
place (reconciler/cli/common.py)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from reconciler.cli.apply_commands import apply, destroy
from reconciler.cli.common import EXIT_OK, exit_code_for
from reconciler.cli.config_commands import effective, fmt, schema, validate
from reconciler.cli.drift_commands import drift
from reconciler.cli.import_commands import import_, local
from reconciler.cli.plan_commands import graph, plan, show
from reconciler.cli.scheduler_commands import jobs, pools, scheduler
from reconciler.cli.state_commands import force_unlock, state


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        result = cli.main(args=args, prog_name="poolform", standalone_mode=False)
    except BaseException as error:  # the last boundary: never a bare traceback
        if isinstance(error, SystemExit):
            raise
        return exit_code_for(error, debug="--debug" in args)
    return result if isinstance(result, int) else EXIT_OK


def entrypoint() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entrypoint()
