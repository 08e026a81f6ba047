"""drift, `plan --refresh-only` and `apply --refresh-only`: reality against recorded state.

`drift` changes nothing: it reads state (briefly under the lock, so it never sees an apply
half-way), lists what the provider has in one batched refresh, and reports. Exit 0 no drift,
2 drift, 1 error. `apply --refresh-only` writes the drifted attributes into state, under the
lock, one record per state write like any apply.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.plan_commands import DIR, lock_timeout_option, parse_timeout
from reconciler.errors import PoolformError

if TYPE_CHECKING:
    from reconciler.drift.model import DriftReport

EXIT_DRIFT = 2


def detect(directory: Path, lock_timeout: float) -> DriftReport:
    from reconciler.loading import load_configuration
    from reconciler.workspace import read_state, refresh_once, secret_salt

    configuration = load_configuration(directory)
    snapshot = read_state(configuration, "drift", lock_timeout)
    refreshed = refresh_once(configuration, snapshot, secret_salt(configuration, snapshot.lineage))
    assert refreshed.drift is not None  # refresh_state always compares
    return refreshed.drift


def emit_drift(report: DriftReport, as_json: bool, as_markdown: bool) -> None:
    from reconciler.render.drift import render_drift_markdown, render_drift_text

    if as_json:
        click.echo(json.dumps(report.to_json(), indent=2, sort_keys=True))
    elif as_markdown:
        click.echo(render_drift_markdown(report), nl=False)
    else:
        click.echo(render_drift_text(report), nl=False)


@click.command()
@DIR
@click.option("--json", "as_json", is_flag=True, help="The report as JSON (format_version 1.0).")
@click.option("--markdown", "as_markdown", is_flag=True, help="The report as Markdown.")
@lock_timeout_option
def drift(directory: Path, as_json: bool, as_markdown: bool, lock_timeout: str) -> int:
    """Find what changed behind poolform's back. Exit 0 none, 2 drift, 1 error."""
    if as_json and as_markdown:
        raise PoolformError("choose one of --json and --markdown")
    report = detect(directory, parse_timeout(lock_timeout))
    emit_drift(report, as_json, as_markdown)
    return EXIT_DRIFT if report.has_drift else 0


def accept_drift(directory: Path, *, auto_approve: bool, as_json: bool, lock_timeout: float) -> int:
    """`apply --refresh-only`: record reality in state. Capacity is not touched."""
    from reconciler.cli.apply_commands import confirm
    from reconciler.drift.accept import accepted_record
    from reconciler.drift.model import DELETED
    from reconciler.loading import load_configuration
    from reconciler.workspace import open_provider, open_state, refresh_state, secret_salt
    from state.locking import lock_state

    configuration = load_configuration(directory)
    backend = open_state(configuration)
    provider = open_provider(configuration, backend)
    try:
        with lock_state(backend, "apply", lock_timeout):
            snapshot = backend.read()
            salt = secret_salt(configuration, snapshot.lineage)
            report = refresh_state(provider, snapshot, salt).drift
            assert report is not None  # refresh_state always compares
            emit_drift(report, as_json, False)
            if not report.drifted:
                if not as_json:
                    click.echo("\nNothing to accept: state already matches reality.")
                return 0
            confirm(auto_approve, "accept these values into state")
            for item in report.drifted:
                if item.status == DELETED:
                    backend.delete_resource(item.address, expected_lineage=snapshot.lineage)
                    continue
                record = snapshot.get(item.address)
                assert record is not None  # drift is found only for recorded resources
                backend.write_resource(
                    accepted_record(record, item, salt), expected_lineage=snapshot.lineage
                )
    finally:
        provider.close()
        backend.close()
    if not as_json:
        click.echo(
            f"\nAccepted {len(report.drifted)} drifted resource(s) into state; capacity unchanged."
        )
        if report.unmanaged:
            click.echo(
                f"{len(report.unmanaged)} unmanaged resource(s) left alone: "
                "`poolform plan` deletes them, `poolform import` takes one under management."
            )
    return 0
