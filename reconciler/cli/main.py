"""`poolform`: the command group, error translation and exit codes.

0 success, 1 error (usage errors included: 2 is reserved for "changes present"), 2 changes or
drift where a command says so. Errors are one message on stderr; `--debug` adds the traceback.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Sequence

import click

from reconciler.cli.apply_commands import apply, destroy
from reconciler.cli.config_commands import effective, schema, validate
from reconciler.cli.drift_commands import drift
from reconciler.cli.import_commands import import_, local
from reconciler.cli.plan_commands import graph, plan, show
from reconciler.cli.scheduler_commands import jobs, pools, scheduler
from reconciler.cli.state_commands import force_unlock, state
from reconciler.errors import PoolformError

EXIT_OK, EXIT_ERROR, EXIT_CHANGES = 0, 1, 2


class ExitCode(Exception):
    """Raised by a command that ends with a code other than 0 without an error (e.g. 2)."""

    def __init__(self, code: int):
        self.code = code


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.version_option(package_name="poolform", prog_name="poolform")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Declare shared GPU and compute capacity in YAML and reconcile it like Terraform."""
    ctx.obj = {"debug": debug}


cli.add_command(validate)
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
    debug = "--debug" in args
    try:
        result = cli.main(args=args, prog_name="poolform", standalone_mode=False)
    except ExitCode as done:
        return done.code
    except PoolformError as error:
        if debug:
            traceback.print_exc()
        click.echo(error.render(), err=True)
        return EXIT_ERROR
    except click.exceptions.Abort:
        click.echo("error: aborted", err=True)
        return EXIT_ERROR
    except click.ClickException as error:
        error.show()
        return EXIT_ERROR
    except click.exceptions.Exit as done:
        return done.exit_code
    except KeyboardInterrupt:
        click.echo("error: interrupted", err=True)
        return 130
    except Exception as error:  # the last boundary: never a bare traceback
        if debug:
            traceback.print_exc()
        # Translated here, imported only now: neither is needed to start the CLI.
        from providers.protocol import ProviderError
        from state.errors import StateError

        if isinstance(error, StateError | ProviderError):
            click.echo(f"error: {error}", err=True)
            return EXIT_ERROR
        click.echo(
            f"internal error: {type(error).__name__}: {error} (run with --debug for details)",
            err=True,
        )
        return EXIT_ERROR
    return result if isinstance(result, int) else EXIT_OK


def entrypoint() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entrypoint()
