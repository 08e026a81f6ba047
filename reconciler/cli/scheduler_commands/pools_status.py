"""pools status: capacity and usage of the applied pools."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from reconciler.cli.scheduler_commands.shared import echo_json, echo_lines
from reconciler.cli.scheduler_context import job_context
from reconciler.cli.scheduler_options import dir_option, json_option


@click.group()
def pools() -> None:
    """Capacity and usage of the applied pools."""


@pools.command("status")
@click.argument("name", required=False)
@json_option
@dir_option
def pools_status(name: str | None, as_json: bool, directory: Path | None) -> None:
    """Per pool and key: capacity, reserved, used, borrowed, queued demand; per policy its share."""
    from reconciler.scheduler.pools import pools_status as usecase
    from reconciler.scheduler.views import pools_json

    ctx = job_context(directory)
    try:
        found = usecase(ctx, name)
    finally:
        ctx.close()
    if as_json:
        echo_json(pools_json(found))
        return
    if not found.pools and name is None:
        # State is there (job_context refuses a configuration never applied): its last apply
        # left no pool, and "apply first" would be wrong.
        click.echo("No pools are applied: the applied configuration declares none.")
    from reconciler.scheduler.text import deleted_pools, pool_usage

    bars = sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
    for pool in found.pools:
        echo_lines(pool_usage(pool, bars))
    echo_lines(deleted_pools(found.deleted))
