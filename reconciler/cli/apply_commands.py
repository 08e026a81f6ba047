"""apply and destroy: the commands that change capacity (the use cases take the state lock).

`apply --refresh-only` accepts what changed outside poolform into state instead, changing no
capacity. With `--json`, stdout carries only JSON lines (reconciler/apply/events.schema.json):
there is no prompt to show, so `--json` needs `--auto-approve` or a saved plan, and an error
that ends the command is the stream's last line too (an `error` event, printed at the boundary
by common.tell_json_error; stderr says it as well).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reconciler.cli.common import (
    EVENTS_FORMAT_VERSION,
    EXIT_ERROR,
    EXIT_OK,
    end_json_stream,
    lock_timeout_option,
    parse_timeout,
    terminal_confirm,
)
from reconciler.cli.global_options import CHDIR
from reconciler.cli.numbers import Integer
from reconciler.cli.output import describe_saved, emit_drift, use_color
from reconciler.cli.progress import JsonReporter, Reporter, reporter_for
from reconciler.errors import PoolformError
from reconciler.printable import continued, one_line

if TYPE_CHECKING:
    from reconciler.drift.model import DriftReport
    from reconciler.plan import Plan
    from reconciler.usecases.applying import AppliedPlan


class ApplyView:
    """What apply shows: the plan before confirmation (as text; a saved plan was reviewed
    already), then one progress line or JSON event per step, then the summary. The reporter
    starts with the first event, after any prompt."""

    def __init__(self, as_json: bool, *, show_plan: bool = True):
        self.as_json = as_json
        self.show_plan = show_plan and not as_json
        self.total = 0
        self.reporter: Reporter | None = None
        self._starting = threading.Lock()

    def plan(self, plan: Plan) -> None:
        from reconciler.render import render_text

        self.total = len(plan.changes)
        if self.show_plan:
            click.echo(render_text(plan, color=use_color()), nl=False)

    def event(self, event: dict[str, Any]) -> None:
        with self._starting:  # the walker's threads report at once: one reporter for all
            if self.reporter is None:
                self.reporter = reporter_for(self.total, self.as_json)
        self.reporter(event)

    def close(self) -> None:
        if self.reporter is not None:
            self.reporter.close()


def refuse_json_prompt(as_json: bool, auto_approve: bool, command: str) -> None:
    """With --json, stdout is only JSON lines: a question cannot be asked there."""
    if as_json and not auto_approve:
        raise PoolformError(
            f"`poolform {command} --json` cannot ask for confirmation: its output is only "
            "JSON lines",
            hint="add --auto-approve, or review with `poolform plan -out FILE` and run "
            "`poolform apply --json FILE`"
            if command == "apply"
            else "add --auto-approve",
        )


def summary_event(
    operation: str,
    plan: Plan | None,
    applied: AppliedPlan | None = None,
    *,
    accepted: tuple[str, ...] = (),
    label: str | None = None,
) -> dict[str, Any]:
    """The last JSON line of apply, destroy and apply --refresh-only: one shape for all,
    whether anything changed or not."""
    from reconciler.plan.model import Summary

    result = applied.result if applied is not None else None
    summary = plan.summary if plan is not None else Summary()
    done = [str(key) for key in result.done] if result is not None else list(accepted)
    return {
        "type": "summary",
        "format_version": EVENTS_FORMAT_VERSION,
        "operation": operation,
        "ok": result is None or result.ok,
        "label": label,
        "changes": {
            "add": summary.add,
            "change": summary.change,
            "replace": summary.replace,
            "destroy": summary.destroy,
        },
        "done": done,
        "failed": {str(k): m for k, m in result.failed.items()} if result is not None else {},
        "skipped": {str(k): str(c) for k, c in result.skipped.items()} if result else {},
        "not_started": [str(k) for k in result.not_started] if result is not None else [],
    }


def report_applied(
    applied: AppliedPlan, as_json: bool, operation: str, label: str | None = None
) -> int:
    result = applied.result
    if as_json:
        end_json_stream(summary_event(operation, applied.plan, applied, label=label))
    if result is None:
        return EXIT_OK
    summary = applied.plan.summary
    if result.ok:
        if not as_json:
            if applied.plan.options.destroy:
                click.echo(f"\nDestroy complete! Resources: {summary.destroy} destroyed.")
            else:
                click.echo(
                    f"\nApply complete! Resources: {summary.add} added, {summary.change} changed, "
                    f"{summary.replace} replaced, {summary.destroy} destroyed."
                )
        return EXIT_OK
    click.echo(
        f"\nApply failed: {len(result.done)} done, {len(result.failed)} failed, "
        f"{len(result.skipped)} skipped, {len(result.not_started)} not started.",
        err=True,
    )
    for address, message in result.failed.items():
        shown = continued(message, "      ")  # a setup log's last lines, one a line
        click.echo(f"  failed: {one_line(str(address))}: {shown}", err=True)
    for address, cause in result.skipped.items():
        click.echo(
            f"  skipped: {one_line(str(address))} (depends on {one_line(str(cause))})", err=True
        )
    return EXIT_ERROR


def accept_drift(directory: Path, *, auto_approve: bool, as_json: bool, lock_timeout: float) -> int:
    """`apply --refresh-only`: record reality in state. Capacity is not touched."""
    from reconciler.usecases.drifting import accept_drift as accept

    def show(report: DriftReport) -> None:
        if as_json:
            JsonReporter()({"type": "drift", "report": report.to_json()})
        else:
            emit_drift(report, False, False)

    accepted = accept(
        directory,
        confirm=terminal_confirm(auto_approve, "apply --refresh-only"),
        on_report=show,
        lock_timeout=lock_timeout,
    )
    if as_json:
        addresses = tuple(d.address for d in accepted.report.drifted) if accepted.accepted else ()
        end_json_stream(summary_event("refresh-only", None, accepted=addresses))
        return EXIT_OK
    if not accepted.accepted:
        click.echo("\nNothing to accept: state already matches reality.")
        return EXIT_OK
    click.echo(
        f"\nAccepted {accepted.accepted} drifted resource(s) into state; capacity unchanged."
    )
    if accepted.report.unmanaged:
        click.echo(
            f"{len(accepted.report.unmanaged)} unmanaged resource(s) left alone: "
            "`poolform plan` deletes them, `poolform import` takes one under management."
        )
    return EXIT_OK


@click.command()
# Named as the reference names it: `[TARGET]` beside `--target ADDR` read as an address.
@click.argument(
    "target",
    metavar="[DIR | PLANFILE]",
    type=click.Path(path_type=Path),
    default=".",
    required=False,
)
@click.option("--auto-approve", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--parallelism",
    metavar="N",
    default=10,
    show_default=True,
    type=Integer(1, 1000),
    help="How many changes may run at once.",
)
@click.option(
    "--refresh-only",
    is_flag=True,
    help="Accept what changed outside poolform into state; change no capacity.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON event per line.")
@click.option(
    "--target", "targets", multiple=True, metavar="ADDR", help="Only ADDR and what it needs."
)
@click.option(
    "--replace", "replace", multiple=True, metavar="ADDR", help="Force ADDR to be replaced."
)
@lock_timeout_option
def apply(
    target: Path,
    auto_approve: bool,
    parallelism: int,
    refresh_only: bool,
    as_json: bool,
    targets: tuple[str, ...],
    replace: tuple[str, ...],
    lock_timeout: str,
) -> int:
    """Apply a configuration directory (after confirmation) or a saved plan (exactly its steps)."""
    from reconciler.plan import PlanOptions
    from reconciler.plan.planfile import is_plan_file
    from reconciler.usecases.applying import apply_plan
    from reconciler.usecases.planning import read_saved_plan

    timeout = parse_timeout(lock_timeout)
    saved = target.is_file()
    if refresh_only:
        if saved or targets or replace:
            raise PoolformError(
                "--refresh-only takes a configuration directory and no other plan options"
            )
        refuse_json_prompt(as_json, auto_approve, "apply --refresh-only")
        return accept_drift(
            target, auto_approve=auto_approve, as_json=as_json, lock_timeout=timeout
        )
    refuse_json_prompt(as_json, auto_approve or saved, "apply")
    label = None
    if saved and is_plan_file(target):
        reviewed = read_saved_plan(target)
        label = reviewed.label
        if not as_json:
            click.echo(describe_saved(reviewed))
    view = ApplyView(as_json, show_plan=not saved)
    try:
        applied = apply_plan(
            target,
            options=PlanOptions(targets=targets, replace=replace),
            confirm=terminal_confirm(auto_approve),
            on_plan=view.plan,
            on_event=view.event,
            parallelism=parallelism,
            lock_timeout=timeout,
            environ=os.environ,
            within=Path.cwd() if click.get_current_context().find_root().meta.get(CHDIR) else None,
        )
    finally:
        view.close()
    if saved and applied.result is None and not as_json:
        # The saved plan is not shown again, so its "No changes" was not either: without this
        # line such an apply printed only the plan's header, and never said how it ended.
        click.echo("No changes: the saved plan has nothing to apply.")
    return report_applied(applied, as_json, "apply", label)


@click.command()
@click.argument("directory", type=click.Path(path_type=Path), default=".", required=False)
@click.option("--auto-approve", is_flag=True, help="Do not ask for confirmation.")
@click.option(
    "--parallelism",
    metavar="N",
    default=10,
    show_default=True,
    type=Integer(1, 1000),
    help="How many changes may run at once.",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON event per line.")
@click.option(
    "--target",
    "targets",
    multiple=True,
    metavar="ADDR",
    help="Only ADDR and what depends on it (repeatable).",
)
@lock_timeout_option
def destroy(
    directory: Path,
    auto_approve: bool,
    parallelism: int,
    as_json: bool,
    targets: tuple[str, ...],
    lock_timeout: str,
) -> int:
    """Delete everything this configuration's state records (or only --target ADDR)."""
    from reconciler.usecases.applying import destroy as destroy_all

    refuse_json_prompt(as_json, auto_approve, "destroy")
    view = ApplyView(as_json)
    try:
        applied = destroy_all(
            directory,
            targets=targets,
            confirm=terminal_confirm(auto_approve, "destroy"),
            on_plan=view.plan,
            on_event=view.event,
            parallelism=parallelism,
            lock_timeout=parse_timeout(lock_timeout),
            environ=os.environ,
        )
    finally:
        view.close()
    return report_applied(applied, as_json, "destroy")
