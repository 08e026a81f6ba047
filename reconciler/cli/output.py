"""Showing results on the terminal: plans and drift reports as text, JSON or Markdown."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.gcpause import collector_paused

if TYPE_CHECKING:
    from reconciler.drift.model import DriftReport
    from reconciler.plan import Plan


def use_color() -> bool:
    """Colour only on a terminal, never with NO_COLOR, TERM=dumb or --no-color."""
    from reconciler.cli.global_options import color_disabled

    return (
        sys.stdout.isatty()
        and "NO_COLOR" not in os.environ
        and os.environ.get("TERM") != "dumb"
        and not color_disabled()
    )


def emit_plan(
    plan: Plan, as_json: bool, as_markdown: bool, *, plan_file: Path | None = None
) -> None:
    """A plan on stdout; `plan_file` is where it is saved, if it is (named in Markdown)."""
    from reconciler.render import render_markdown, render_text

    with collector_paused():
        if as_json:
            click.echo(json.dumps(plan.to_json(), indent=2, sort_keys=True))
        elif as_markdown:
            saved = str(plan_file) if plan_file is not None else None
            click.echo(render_markdown(plan, plan_file=saved))
        else:
            click.echo(render_text(plan, color=use_color()), nl=False)


def emit_drift(report: DriftReport, as_json: bool, as_markdown: bool) -> None:
    from reconciler.render.drift import render_drift_markdown, render_drift_text

    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2, sort_keys=True))
    elif as_markdown:
        click.echo(render_drift_markdown(report), nl=False)
    else:
        click.echo(render_drift_text(report), nl=False)
