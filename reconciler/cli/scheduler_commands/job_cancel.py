"""jobs cancel: queued jobs ended at once, running ones stopped (SIGTERM, then SIGKILL after
--grace), and jobs whose place is gone ended without stopping anything there (--gone)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.scheduler_context import job_context
from reconciler.cli.scheduler_options import JOB_ID, Duration, dir_option, name_option_value

if TYPE_CHECKING:
    from reconciler.scheduler.store import JobRecord

from reconciler.cli.scheduler_commands.shared import echo_lines, id_list, jobs


@jobs.command("cancel")
@click.argument("job_ids", type=JOB_ID, nargs=-1)
@click.option(
    "--pool",
    metavar="NAME",
    callback=name_option_value,
    help="Cancel every queued and running job of this pool.",
)
@click.option(
    "--grace",
    type=Duration(),
    default="30s",
    show_default=True,
    help="SIGTERM, then SIGKILL after.",
)
@click.option(
    "--gone",
    is_flag=True,
    help="The named jobs run on another host (or under another jobs directory) that is gone: "
    "end them cancelled now and release their capacity, stopping nothing there.",
)
@dir_option
def jobs_cancel(
    job_ids: tuple[int, ...], pool: str | None, grace: float, gone: bool, directory: Path | None
) -> None:
    """Cancel jobs: queued ones at once; running ones get SIGTERM, then SIGKILL after --grace."""
    from reconciler.scheduler import jobs as usecases
    from reconciler.scheduler.lifecycle import runs_elsewhere

    if gone and pool is not None:
        raise click.UsageError(
            "--gone takes job ids, not --pool: name each job whose place is gone"
        )
    if job_ids and pool is not None:
        # Read either way (these jobs, and all of the pool's; or these jobs if on the pool),
        # one reading cancels jobs the user did not mean: refused, as SkyPilot refuses ids with
        # --all, rather than guessed.
        raise click.UsageError(
            "name the jobs to cancel or give --pool (every queued and running job of the "
            "pool), not both; nothing was cancelled"
        )
    ctx = job_context(directory)
    already: list[JobRecord] = []
    try:
        here = usecases.here(ctx)
        if gone:
            ended = usecases.cancel_gone(ctx, list(job_ids))
        else:
            changed = usecases.cancel(ctx, list(job_ids), pool, grace)
            already = usecases.being_cancelled(ctx, job_ids) if not changed else []
    finally:
        ctx.close()
    if gone:
        if not ended:
            click.echo("Nothing to cancel: the job(s) had already ended.")
        for job in ended:
            where = job.place.describe() if job.place else "its place"
            echo_lines([
                f"Cancelled job {job.id}, its capacity released; its process on {where} was "
                "not stopped (nothing here can reach it) and is no longer watched"
            ])  # fmt: skip
        return
    if not changed:
        if pool is not None:  # none may ever have run there: "had already ended" misleads
            echo_lines([f"Nothing to cancel: pool {pool} has no queued or running job."])
        elif already:
            echo_lines([
                f"Nothing to change: job(s) {id_list(already)} are already being cancelled, "
                "SIGKILL due no later than this --grace would make it"
            ])  # fmt: skip
        else:
            click.echo("Nothing to cancel: the job(s) had already ended.")
        return
    done = [j for j in changed if j.status.value == "cancelled"]
    stopping = [j for j in changed if j.status.value != "cancelled"]
    away = [j for j in stopping if runs_elsewhere(j, here)]
    stopping = [j for j in stopping if j not in away]
    if done:
        click.echo(f"Cancelled {len(done)} queued job(s): {id_list(done)}")
    if stopping:
        click.echo(
            f"Stopping {len(stopping)} running job(s): {id_list(stopping)} "
            "(the scheduler records them as cancelled once they exit)"
        )
    for job in away:
        where = job.place.describe() if job.place else "another place"
        echo_lines([
            f"Job {job.id} runs on {where}, not here: it cannot be signalled from here. Its "
            "cancel is recorded: a scheduler there stops it and records it as cancelled. If "
            f"that place is gone for good: poolform jobs cancel --gone {job.id}"
        ])  # fmt: skip
