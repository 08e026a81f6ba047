"""jobs submit|list|show|logs: queue a job, and watch the queue and a job's output."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.common import echo_json_document
from reconciler.cli.numbers import Integer
from reconciler.cli.scheduler_context import configuration_dir, job_context
from reconciler.cli.scheduler_options import (
    JOB_ID,
    STATUSES,
    dir_option,
    json_option,
    name_option_value,
    pool_option_value,
    subject_option_value,
)
from reconciler.errors import PoolformError
from reconciler.printable import printable

if TYPE_CHECKING:
    from reconciler.scheduler.jobfile import Overrides
    from reconciler.scheduler.jobs import Submitted
    from reconciler.scheduler.store import JobRecord

from reconciler.cli.scheduler_commands.shared import echo_json, echo_lines, id_list, jobs


@jobs.command("submit")
@click.argument("job_file", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--pool",
    metavar="NAME",
    callback=pool_option_value,
    help="Run on this pool (overrides the job file).",
)
@click.option(
    "--subject",
    metavar="NAME",
    callback=subject_option_value,
    help="Account to this subject's policy (overrides the job file).",
)
@click.option(
    "--num-jobs", metavar="N", type=Integer(1, 100_000), help="Submit N jobs, ranks 0..N-1."
)
@click.option("--priority", metavar="P", type=Integer(-1_000_000, 1_000_000), help="Higher wins.")
@click.option("--preemptible/--no-preemptible", default=None, help="Override the job file.")
@json_option
@dir_option
def jobs_submit(
    job_file: Path,
    pool: str | None,
    subject: str | None,
    num_jobs: int | None,
    priority: int | None,
    preemptible: bool | None,
    as_json: bool,
    directory: Path | None,
) -> None:
    """Queue a job (no running scheduler needed); exit 1 if no pool could ever run it."""
    from reconciler.scheduler.jobfile import Overrides
    from reconciler.scheduler.views import submitted_json

    overrides = Overrides(pool, subject, num_jobs, priority, preemptible)
    result = _submit(job_file, overrides, directory, as_json=as_json)
    if as_json:
        echo_json(submitted_json(result.jobs))
    if result.rejected is not None:
        raise PoolformError(
            f"job rejected ({result.rejected.code.value}): {result.rejected.message}",
            hint=f"recorded as job(s) {id_list(result.jobs)}, status rejected",
        )
    if not as_json:
        first = result.jobs[0]
        ranks = f", ranks 0-{len(result.jobs) - 1}" if len(result.jobs) > 1 else ""
        # Found from the job file's directory first: say which queue when it is not here.
        where = configuration_dir(directory, near=job_file).resolve()
        queue = "" if where == Path.cwd().resolve() else f" (the queue of {printable(str(where))})"
        click.echo(
            f"Submitted {first.name}{ranks} to pool {first.pool}{queue}: "
            f"job id(s) {id_list(result.jobs)}"
        )


def _submit(
    job_file: Path, overrides: Overrides, directory: Path | None, *, as_json: bool
) -> Submitted:
    """The submit itself. A job file or queue refused here prints the error document with
    --json (at the boundary); a job recorded as rejected prints the submitted jobs instead
    (their status says it), so stdout always holds one document."""
    from reconciler.scheduler import jobs as usecases

    ctx = job_context(directory, near=job_file, submitting=True)
    try:
        return usecases.submit(ctx, job_file, overrides)
    finally:
        ctx.close()


@jobs.command("list")
@click.option("--pool", metavar="NAME", callback=name_option_value, help="Only jobs on this pool.")
@click.option("--status", type=click.Choice(STATUSES), help="Only jobs with this status.")
@json_option
@dir_option
def jobs_list(pool: str | None, status: str | None, as_json: bool, directory: Path | None) -> None:
    """Every job, oldest first, with its status and why it waits."""
    from reconciler.scheduler import jobs as usecases
    from reconciler.scheduler.model import Status
    from reconciler.scheduler.views import list_json_text

    ctx = job_context(directory)
    try:
        found = usecases.list_jobs(ctx, pool, Status(status) if status else None)
    finally:
        ctx.close()
    if as_json:
        chunk: list[str] = []  # written a thousand jobs at a time, never held whole
        for text in list_json_text(found):
            chunk.append(text)
            if len(chunk) == 1000:
                echo_json_document("".join(chunk), nl=False)
                chunk.clear()
        echo_json_document("".join(chunk), nl=False)
        return
    from reconciler.scheduler.text import jobs_table

    echo_lines(jobs_table(found))


@jobs.command("show")
@click.argument("job_id", type=JOB_ID)
@json_option
@dir_option
def jobs_show(job_id: int, as_json: bool, directory: Path | None) -> None:
    """A job, why it is not running (one line per candidate pool), and its history."""
    from reconciler.scheduler import jobs as usecases
    from reconciler.scheduler.views import detail_json

    ctx = job_context(directory)
    try:
        detail = usecases.show(ctx, job_id)
    finally:
        ctx.close()
    if as_json:
        echo_json(detail_json(detail))
        return
    from reconciler.scheduler.text import job_story

    echo_lines(job_story(detail))


@jobs.command("logs")
@click.argument("job_id", type=JOB_ID)
@click.option("--follow", "-f", is_flag=True, help="Keep streaming until the job ends.")
@dir_option
def jobs_logs(job_id: int, follow: bool, directory: Path | None) -> None:
    """A job's output (every attempt), as captured in its log file."""
    from reconciler.scheduler import jobs as usecases

    ctx = job_context(directory)
    try:
        away = usecases.log_elsewhere(ctx, job_id)
        if away is not None:
            from reconciler.printable import one_line

            click.echo(
                one_line(
                    f"job {job_id}'s latest attempt ran on {away.describe()}: its output is in "
                    f"{away.jobs_dir}/{job_id}/output.log there; below is only what is here"
                ),
                err=True,
            )
        for chunk in usecases.logs(ctx, job_id, follow, time.sleep, on_waiting=_say_waiting):
            click.echo(chunk, nl=False)
    finally:
        ctx.close()


def _say_waiting(job: JobRecord) -> None:
    """`jobs logs --follow` of a job not started yet: say once why nothing comes (as `kubectl
    logs -f` of a pending pod says it waits), on stderr, which the output never goes to."""
    from reconciler.printable import one_line

    why = f": {job.reason.message}" if job.reason is not None else ""
    click.echo(one_line(f"job {job.id} is waiting to start ({job.status.value}{why})"), err=True)
