"""Showing results on the terminal: plans and drift reports as text, JSON or Markdown."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.common import echo_json_document
from reconciler.gcpause import collector_paused
from reconciler.printable import one_line

if TYPE_CHECKING:
    from reconciler.drift.model import DriftReport
    from reconciler.plan import Plan
    from reconciler.plan.planfile import SavedPlan
    from reconciler.render.markdown import Provenance

# Where CI systems say which commit a job runs at: GitHub Actions, GitLab CI.
COMMIT_VARIABLES = ("GITHUB_SHA", "CI_COMMIT_SHA")


def commit_from_ci(environ: Mapping[str, str]) -> str | None:
    return next((environ[name] for name in COMMIT_VARIABLES if environ.get(name)), None)


def describe_saved(saved: SavedPlan) -> str:
    """`The plan for pr-12, made at commit abc123 against state serial 7.`"""
    what = f"The plan for {one_line(saved.label)}" if saved.label else "The saved plan"
    commit = f"commit {one_line(saved.commit)}" if saved.commit else "an unknown commit"
    return f"{what}, made at {commit} against state serial {saved.plan.serial}."


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
    plan: Plan,
    as_json: bool,
    as_markdown: bool,
    *,
    plan_file: Path | None = None,
    provenance: Provenance | None = None,
) -> None:
    """A plan on stdout; `plan_file` is where it is saved, if it is (named in Markdown), and
    `provenance` what the Markdown says it is for and made from."""
    from reconciler.render import render_markdown, render_text

    with collector_paused():
        if as_json:
            echo_json_document(json.dumps(plan.to_json(), indent=2, sort_keys=True))
        elif as_markdown:
            saved = str(plan_file) if plan_file is not None else None
            click.echo(render_markdown(plan, plan_file=saved, provenance=provenance))
        else:
            click.echo(render_text(plan, color=use_color()), nl=False)


def emit_drift(
    report: DriftReport, as_json: bool, as_markdown: bool, *, label: str | None = None
) -> None:
    """A drift report on stdout; `label` marks the Markdown (its configuration directory)."""
    from reconciler.render.drift import render_drift_markdown, render_drift_text

    for warning in report.warnings:
        click.echo(f"warning: {one_line(warning)}", err=True)
    if as_json:
        echo_json_document(json.dumps(report.to_json(), indent=2, sort_keys=True))
    elif as_markdown:
        click.echo(render_drift_markdown(report, label=label), nl=False)
    else:
        click.echo(render_drift_text(report), nl=False)
