"""plan, show, graph: compute and present changes; nothing here changes capacity."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from reconciler.cli.common import (
    DIR,
    EXIT_CHANGES,
    EXIT_OK,
    echo_json_document,
    lock_option,
    lock_timeout_option,
    lock_wait,
    warn_damaged,
)
from reconciler.cli.output import commit_from_ci, describe_saved, emit_drift, emit_plan
from reconciler.errors import PoolformError
from reconciler.printable import one_line


@click.command()
@DIR
@click.option(
    "--out",
    "out",
    metavar="FILE",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Save the plan in FILE for `poolform apply FILE`.",
)
@click.option("--json", "as_json", is_flag=True, help="The plan as JSON (format_version 1.0).")
@click.option(
    "--markdown", "as_markdown", is_flag=True, help="The plan as Markdown for a pull request."
)
@click.option("--detailed-exitcode", is_flag=True, help="Exit 0 no changes, 1 error, 2 changes.")
@click.option("--refresh/--no-refresh", default=True, help="Read the provider's view first.")
@click.option(
    "--refresh-only",
    is_flag=True,
    help="Show what `apply --refresh-only` would accept into state (exit 2: drift).",
)
@click.option("--destroy", is_flag=True, help="Plan to delete everything in state.")
@click.option(
    "--target", "targets", multiple=True, metavar="ADDR", help="Only ADDR and what it needs."
)
@click.option(
    "--replace", "replace", multiple=True, metavar="ADDR", help="Force ADDR to be replaced."
)
@lock_timeout_option
@lock_option
@click.option(
    "--label",
    metavar="TEXT",
    help="What the plan is for (e.g. the pull request): kept in the -out file, shown by show "
    "and apply, and the Markdown comment's marker (default: the directory).",
)
@click.option(
    "--commit",
    metavar="SHA",
    help="The commit the configuration is at, stated in the Markdown and kept in the -out "
    "file (default: $GITHUB_SHA or $CI_COMMIT_SHA).",
)
def plan(
    directory: Path,
    out: Path | None,
    as_json: bool,
    as_markdown: bool,
    detailed_exitcode: bool,
    refresh: bool,
    refresh_only: bool,
    destroy: bool,
    targets: tuple[str, ...],
    replace: tuple[str, ...],
    lock_timeout: str,
    lock: bool,
    label: str | None,
    commit: str | None,
) -> int:
    """Show what apply would change: create, update in place, replace or delete."""
    from reconciler.plan import PlanOptions
    from reconciler.plan.planfile import refuse_plan_among_configuration
    from reconciler.render.markdown import Provenance
    from reconciler.usecases.drifting import detect_drift
    from reconciler.usecases.planning import plan_configuration, save_plan

    if as_json and as_markdown:
        raise PoolformError("choose one of --json and --markdown")
    if refresh_only:
        if out or destroy or targets or replace or not refresh:
            raise PoolformError(
                "--refresh-only plans no capacity changes: it takes no -out, --destroy, "
                "--target, --replace or --no-refresh (run `poolform apply --refresh-only`)"
            )
        report = detect_drift(
            directory, lock_timeout=lock_wait(lock_timeout, lock), refresh_only=True, lock=lock
        )
        emit_drift(report, as_json, as_markdown, label=label or str(directory))
        if report.drifted and not as_json:
            click.echo("\n`poolform apply --refresh-only` would record these values in state.")
        return EXIT_CHANGES if detailed_exitcode and report.has_drift else EXIT_OK
    if out is not None:
        refuse_plan_among_configuration(out, directory)
    options = PlanOptions(destroy=destroy, targets=targets, replace=replace, refresh=refresh)
    planned = plan_configuration(
        directory,
        options,
        environ=os.environ,
        lock_timeout=lock_wait(lock_timeout, lock),
        lock=lock,
    )
    commit = commit or commit_from_ci(os.environ)
    provenance = Provenance(label or str(directory), commit)
    if out is not None and as_json:
        # saved first: a file that cannot be written ends the command with one error document
        # on stdout, not a plan document followed by an error one
        save_plan(planned, out, label=label, commit=commit)
    emit_plan(planned.plan, as_json, as_markdown, plan_file=out, provenance=provenance)
    if out is not None and not as_json:
        save_plan(planned, out, label=label, commit=commit)
        what = f"the plan for {one_line(label)}" if label else "the plan"
        click.echo(
            f"\nSaved {what} to {out}. Apply exactly these steps with: poolform apply {out}",
            err=as_markdown,
        )
    return EXIT_CHANGES if detailed_exitcode and planned.plan.has_changes else EXIT_OK


@click.command()
@click.argument(
    "planfile", metavar="[PLANFILE | DIR]", type=click.Path(path_type=Path), required=False
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="The plan as JSON (format_version 1.0); without PLANFILE, the state.",
)
@click.option(
    "--markdown", "as_markdown", is_flag=True, help="The plan as Markdown for a pull request."
)
def show(planfile: Path | None, as_json: bool, as_markdown: bool) -> None:
    """Render a saved plan, with what it was made for (its --label) and from. Without
    PLANFILE (or given a configuration directory), the state recorded for the configuration
    (as `terraform show`): every resource's attributes and ids; sensitive values are never
    shown."""
    from reconciler.render.markdown import Provenance
    from reconciler.usecases.planning import read_saved_plan

    if as_json and as_markdown:  # as plan and drift refuse them (show printed the JSON alone)
        raise PoolformError("choose one of --json and --markdown")
    if planfile is None or planfile.is_dir():  # a configuration directory: its state
        _show_state(planfile or Path("."), as_json, as_markdown)
        return

    saved = read_saved_plan(planfile)
    provenance = Provenance(saved.label or str(saved.directory), saved.commit)
    if not as_json and not as_markdown:
        click.echo(f"{describe_saved(saved)}\n")
    emit_plan(saved.plan, as_json, as_markdown, plan_file=planfile, provenance=provenance)


def _show_state(directory: Path, as_json: bool, as_markdown: bool) -> None:
    from reconciler.render.state_text import render_state
    from reconciler.usecases.showing import recorded_state, state_document

    if as_markdown:
        raise PoolformError(
            "--markdown renders a saved plan; give its file: poolform show PLANFILE --markdown",
            hint="without PLANFILE, `poolform show` prints the state (--json: as JSON)",
        )
    recorded = recorded_state(directory)
    warn_damaged(recorded.damaged if recorded else {})
    if as_json:
        echo_json_document(json.dumps(state_document(recorded), indent=2, sort_keys=True))
    else:
        click.echo(render_state(recorded.records if recorded else ()), nl=False)


@click.command()
@DIR
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["mermaid", "dot"]),
    default="mermaid",
    show_default=True,
    help="Mermaid (for Markdown) or Graphviz DOT.",
)
@click.option("--destroy", is_flag=True, help="The graph of deleting everything in state.")
@lock_timeout_option
@lock_option
def graph(directory: Path, fmt: str, destroy: bool, lock_timeout: str, lock: bool) -> None:
    """The change graph as a picture: actions coloured, order visible."""
    from reconciler.plan import PlanOptions
    from reconciler.render import render_dot, render_mermaid
    from reconciler.usecases.planning import plan_configuration

    result = plan_configuration(
        directory,
        PlanOptions(destroy=destroy),
        environ=os.environ,
        lock_timeout=lock_wait(lock_timeout, lock),
        command="graph",
        lock=lock,
    ).plan
    click.echo(render_mermaid(result) if fmt == "mermaid" else render_dot(result))
