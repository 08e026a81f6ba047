"""plan, show, graph: compute and present changes; nothing here changes capacity."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.errors import PoolformError
from reconciler.gcpause import collector_paused

if TYPE_CHECKING:
    from reconciler.loading import Configuration
    from reconciler.plan import Plan
    from reconciler.plan.reread import Reread

DIR = click.argument("directory", type=click.Path(path_type=Path), default=".", required=False)


def use_color() -> bool:
    return sys.stdout.isatty() and "NO_COLOR" not in os.environ and os.environ.get("TERM") != "dumb"


lock_timeout_option = click.option(
    "--lock-timeout",
    default="0s",
    show_default=True,
    help="How long to wait for the state lock (e.g. 30s, 2m).",
)


def parse_timeout(text: str) -> float:
    from schemas.quantities import parse_duration

    try:
        return float(parse_duration(text))
    except ValueError as exc:
        raise PoolformError(f"--lock-timeout: {exc}") from None


@dataclass(frozen=True)
class ComputedPlan:
    plan: Plan
    configuration: Configuration
    rereads: Reread | None  # what applying it as a saved plan re-reads (None: not refreshed)


def compute_plan(
    directory: Path,
    *,
    destroy: bool = False,
    targets: tuple[str, ...] = (),
    replace: tuple[str, ...] = (),
    refresh: bool = True,
    lock_timeout: float = 0.0,
) -> ComputedPlan:
    """Load, read state under the lock, refresh, plan."""
    from reconciler.loading import load_configuration
    from reconciler.plan import PlanOptions, make_plan
    from reconciler.workspace import read_state, refresh_once, secret_salt

    configuration = load_configuration(directory)
    snapshot = read_state(configuration, "plan", lock_timeout)
    salt = secret_salt(configuration, snapshot.lineage)
    refreshed = refresh_once(configuration, snapshot, salt) if refresh else None
    options = PlanOptions(
        destroy=destroy,
        targets=targets,
        replace=replace,
        refresh=refresh,
    )
    with collector_paused():
        result = make_plan(configuration, snapshot, options, salt=salt, refresh=refreshed)
    rereads = None
    if refreshed is not None:
        from reconciler.plan.reread import plan_rereads

        rereads = plan_rereads(result, snapshot, refreshed, salt)
    return ComputedPlan(result, configuration, rereads)


def emit(plan: Plan, as_json: bool, as_markdown: bool) -> None:
    from reconciler.render import render_markdown, render_text

    if as_json:
        click.echo(json.dumps(plan.to_json(), indent=2, sort_keys=True))
    elif as_markdown:
        click.echo(render_markdown(plan))
    else:
        click.echo(render_text(plan, color=use_color()), nl=False)


@click.command()
@DIR
@click.option(
    "-out", "--out", "out", type=click.Path(path_type=Path), help="Save the plan for `apply`."
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
) -> int:
    """Show what apply would change: create, update in place, replace or delete."""
    if as_json and as_markdown:
        raise PoolformError("choose one of --json and --markdown")
    if refresh_only:
        from reconciler.cli.drift_commands import EXIT_DRIFT, detect, emit_drift

        if out or destroy or targets or replace or not refresh:
            raise PoolformError(
                "--refresh-only plans no capacity changes: it takes no -out, --destroy, "
                "--target, --replace or --no-refresh (run `poolform apply --refresh-only`)"
            )
        report = detect(directory, parse_timeout(lock_timeout))
        emit_drift(report, as_json, as_markdown)
        if report.drifted and not as_json:
            click.echo("\n`poolform apply --refresh-only` would record these values in state.")
        return EXIT_DRIFT if detailed_exitcode and report.has_drift else 0
    computed = compute_plan(
        directory,
        destroy=destroy,
        targets=targets,
        replace=replace,
        refresh=refresh,
        lock_timeout=parse_timeout(lock_timeout),
    )
    result = computed.plan
    with collector_paused():
        emit(result, as_json, as_markdown)
    if out is not None:
        from reconciler.plan.planfile import write_plan

        write_plan(result, out, directory, computed.rereads)
        from reconciler.workspace import pin_state

        pin_state(computed.configuration, result.lineage)
        if not as_json:
            click.echo(
                f"\nSaved the plan to {out}. Apply exactly these steps with: poolform apply {out}",
                err=as_markdown,
            )
    return 2 if detailed_exitcode and result.has_changes else 0


@click.command()
@click.argument("planfile", type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True)
@click.option("--markdown", "as_markdown", is_flag=True)
def show(planfile: Path, as_json: bool, as_markdown: bool) -> None:
    """Render a saved plan."""
    from reconciler.plan.planfile import read_plan

    emit(read_plan(planfile).plan, as_json, as_markdown)


@click.command()
@DIR
@click.option(
    "--format", "fmt", type=click.Choice(["mermaid", "dot"]), default="mermaid", show_default=True
)
@click.option("--destroy", is_flag=True)
def graph(directory: Path, fmt: str, destroy: bool) -> None:
    """The change graph as a picture: actions coloured, order visible."""
    from reconciler.render import render_dot, render_mermaid

    result = compute_plan(directory, destroy=destroy).plan
    click.echo(render_mermaid(result) if fmt == "mermaid" else render_dot(result))
