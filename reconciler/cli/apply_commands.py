"""apply and destroy: the commands that change capacity. Always under the state lock."""

from __future__ import annotations

import getpass
import hashlib
import json
import socket
import sys
from datetime import UTC, datetime
from pathlib import Path

import click

from reconciler.cli.plan_commands import lock_timeout_option, parse_timeout, use_color
from reconciler.errors import PoolformError


def confirm(auto_approve: bool, what: str) -> None:
    if auto_approve:
        return
    if not sys.stdin.isatty():
        raise PoolformError(
            f"{what} needs confirmation and there is no terminal to ask on",
            hint="review with `poolform plan`, then pass --auto-approve (or apply a saved plan)",
        )
    answer = click.prompt(
        f"\nDo you want to {what}? Only 'yes' will be accepted", default="", show_default=False
    )
    if answer.strip() != "yes":
        raise PoolformError(f"{what} cancelled")


def run_apply(
    target: Path,
    *,
    auto_approve: bool,
    parallelism: int,
    as_json: bool,
    lock_timeout: float,
    destroy: bool = False,
    refresh_only: bool = False,
    targets: tuple[str, ...] = (),
    replace: tuple[str, ...] = (),
) -> int:
    from reconciler.apply import walk_plan
    from reconciler.apply.execute import ChangeExecutor
    from reconciler.cli.progress import reporter_for
    from reconciler.loading import load_configuration
    from reconciler.plan import PlanOptions, make_plan
    from reconciler.plan.expand import expand
    from reconciler.plan.planfile import check_saved_origin, check_saved_plan, read_plan
    from reconciler.render import render_text
    from reconciler.workspace import (
        open_provider,
        open_state,
        refresh_state,
        reread_touched,
        secret_salt,
    )
    from state import HistoryEntry
    from state.locking import lock_state

    if refresh_only:
        from reconciler.cli.drift_commands import accept_drift

        if target.is_file() or destroy or targets or replace:
            raise PoolformError(
                "--refresh-only takes a configuration directory and no other plan options"
            )
        return accept_drift(
            target, auto_approve=auto_approve, as_json=as_json, lock_timeout=lock_timeout
        )
    saved = None
    saved_file = None
    directory = target
    if target.is_file():
        saved_file = read_plan(target)
        saved, directory = saved_file.plan, saved_file.directory
    configuration = load_configuration(directory)
    if saved is not None and (targets or replace):
        raise PoolformError(
            "--target and --replace belong to the plan; a saved plan already has them"
        )
    options = (
        saved.options if saved else PlanOptions(destroy=destroy, targets=targets, replace=replace)
    )
    backend = open_state(configuration)
    provider = open_provider(configuration, backend)
    try:
        with lock_state(backend, "destroy" if options.destroy else "apply", lock_timeout):
            snapshot = backend.read()
            salt = secret_salt(configuration, snapshot.lineage)
            refreshed = None
            if saved_file is not None and saved_file.rereads is not None:
                check_saved_origin(
                    saved_file.plan, configuration.digest, snapshot.lineage, snapshot.serial
                )
                # Only what the plan touches, by id: not the whole fleet.
                refreshed = reread_touched(provider, snapshot, saved_file.rereads, salt)
            elif options.refresh:
                refreshed = refresh_state(provider, snapshot, salt)
            plan = make_plan(configuration, snapshot, options, salt=salt, refresh=refreshed)
            if saved is not None:
                check_saved_plan(
                    saved, configuration.digest, snapshot.lineage, snapshot.serial, plan
                )
            elif not as_json:
                click.echo(render_text(plan, color=use_color()), nl=False)
            if not plan.has_changes:
                if as_json:
                    click.echo(json.dumps({"type": "summary", "changes": 0}))
                return 0
            if saved is None:
                confirm(
                    auto_approve,
                    "destroy all of this capacity" if options.destroy else "apply these changes",
                )
            executor = ChangeExecutor(
                provider, backend, snapshot, expand(configuration, salt, reveal=True)
            )
            reporter = reporter_for(len(plan.changes), as_json)
            try:
                result = walk_plan(plan, executor, parallelism=parallelism, emit=reporter)
            finally:
                reporter.close()
            plan_hash = hashlib.sha256(
                json.dumps(plan.to_json(), sort_keys=True).encode()
            ).hexdigest()
            backend.append_history(
                HistoryEntry(
                    time=datetime.now(UTC).isoformat(timespec="seconds"),
                    user=f"{getpass.getuser()}@{socket.gethostname()}",
                    plan_hash=plan_hash,
                    changes=len(result.done),
                    outcome="ok" if result.ok else "failed",
                    serial=backend.read().serial,
                )
            )
    finally:
        provider.close()
        backend.close()
    summary = plan.summary
    if as_json:
        click.echo(
            json.dumps(
                {
                    "type": "summary",
                    "done": result.done,
                    "failed": result.failed,
                    "skipped": result.skipped,
                    "not_started": result.not_started,
                },
                sort_keys=True,
            )
        )
    if result.ok:
        if not as_json:
            if options.destroy:
                click.echo(f"\nDestroy complete! Resources: {summary.destroy} destroyed.")
            else:
                click.echo(
                    f"\nApply complete! Resources: {summary.add} added, {summary.change} changed, "
                    f"{summary.replace} replaced, {summary.destroy} destroyed."
                )
        return 0
    click.echo(
        f"\nApply failed: {len(result.done)} done, {len(result.failed)} failed, "
        f"{len(result.skipped)} skipped, {len(result.not_started)} not started.",
        err=True,
    )
    for address, message in result.failed.items():
        click.echo(f"  failed: {address}: {message}", err=True)
    for address, cause in result.skipped.items():
        click.echo(f"  skipped: {address} (depends on {cause})", err=True)
    return 1


@click.command()
@click.argument("target", type=click.Path(path_type=Path), default=".", required=False)
@click.option("--auto-approve", is_flag=True, help="Do not ask for confirmation.")
@click.option("--parallelism", default=10, show_default=True, type=click.IntRange(1, 1000))
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
    return run_apply(
        target,
        auto_approve=auto_approve,
        parallelism=parallelism,
        as_json=as_json,
        lock_timeout=parse_timeout(lock_timeout),
        refresh_only=refresh_only,
        targets=targets,
        replace=replace,
    )


@click.command()
@click.argument("directory", type=click.Path(path_type=Path), default=".", required=False)
@click.option("--auto-approve", is_flag=True)
@click.option("--parallelism", default=10, show_default=True, type=click.IntRange(1, 1000))
@click.option("--json", "as_json", is_flag=True)
@lock_timeout_option
def destroy(
    directory: Path, auto_approve: bool, parallelism: int, as_json: bool, lock_timeout: str
) -> int:
    """Delete everything this configuration's state records."""
    return run_apply(
        directory,
        auto_approve=auto_approve,
        parallelism=parallelism,
        as_json=as_json,
        lock_timeout=parse_timeout(lock_timeout),
        destroy=True,
    )
