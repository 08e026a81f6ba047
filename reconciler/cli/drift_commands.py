"""drift: reality against recorded state. Exit 0 no drift, 2 drift, 1 error.

`drift` changes nothing: it reads state (briefly under the lock, so it never sees an apply
half-way), lists what the provider has in one batched refresh, and reports.
"""

from __future__ import annotations

from pathlib import Path

import click

from reconciler.cli.common import (
    DIR,
    EXIT_CHANGES,
    EXIT_OK,
    lock_option,
    lock_timeout_option,
    lock_wait,
)
from reconciler.cli.output import emit_drift
from reconciler.errors import PoolformError


@click.command()
@DIR
@click.option("--json", "as_json", is_flag=True, help="The report as JSON (format_version 1.0).")
@click.option("--markdown", "as_markdown", is_flag=True, help="The report as Markdown.")
@lock_timeout_option
@lock_option
def drift(directory: Path, as_json: bool, as_markdown: bool, lock_timeout: str, lock: bool) -> int:
    """Find what changed behind poolform's back. Exit 0 none, 2 drift, 1 error."""
    from reconciler.usecases.drifting import detect_drift

    if as_json and as_markdown:
        raise PoolformError("choose one of --json and --markdown")
    report = detect_drift(directory, lock_timeout=lock_wait(lock_timeout, lock), lock=lock)
    emit_drift(report, as_json, as_markdown, label=str(directory))
    return EXIT_CHANGES if report.has_drift else EXIT_OK
