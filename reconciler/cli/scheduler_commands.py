"""`jobs`, `pools` and `scheduler`: submit and watch jobs, see pools, run the scheduler loop.

Parse, call a use case from reconciler.scheduler, render. Text for people, `--json` for tools
(the contract is reconciler/scheduler/jobs.schema.json).
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.common import echo_json_document
from reconciler.cli.numbers import Integer
from reconciler.cli.scheduler_context import configuration_dir, job_context
from reconciler.cli.scheduler_options import (
    JOB_ID,
    STATUSES,
    Duration,
    Seconds,
    dir_option,
    env_names_value,
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
    from reconciler.scheduler.loop import CycleReport
    from reconciler.scheduler.store import JobRecord


def _echo_json(data: object) -> None:
    echo_json_document(json.dumps(data, indent=2, sort_keys=True))


def _lines(lines: Iterable[str]) -> None:
    """Lines for a terminal: a subject or reason from input cannot break a line, move the
    cursor or reorder the text (reconciler/printable.py)."""
    from reconciler.printable import one_line

    for line in lines:
        click.echo(one_line(line))


def _ids(jobs: list[JobRecord]) -> str:
    from reconciler.scheduler.text import id_range

    return id_range(jobs)


# -- jobs ------------------------------------------------------------------------------------


@click.group()
def jobs() -> None:
    """Submit jobs to the applied pools, and watch, explain and cancel them."""


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
        _echo_json(submitted_json(result.jobs))
    if result.rejected is not None:
        raise PoolformError(
            f"job rejected ({result.rejected.code.value}): {result.rejected.message}",
            hint=f"recorded as job(s) {_ids(result.jobs)}, status rejected",
        )
    if not as_json:
        first = result.jobs[0]
        ranks = f", ranks 0-{len(result.jobs) - 1}" if len(result.jobs) > 1 else ""
        # Found from the job file's directory first: say which queue when it is not here.
        where = configuration_dir(directory, near=job_file).resolve()
        queue = "" if where == Path.cwd().resolve() else f" (the queue of {printable(str(where))})"
        click.echo(
            f"Submitted {first.name}{ranks} to pool {first.pool}{queue}: "
            f"job id(s) {_ids(result.jobs)}"
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

    _lines(jobs_table(found))


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
        _echo_json(detail_json(detail))
        return
    from reconciler.scheduler.text import job_story

    _lines(job_story(detail))


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
            _lines([
                f"Cancelled job {job.id}, its capacity released; its process on {where} was "
                "not stopped (nothing here can reach it) and is no longer watched"
            ])  # fmt: skip
        return
    if not changed:
        if pool is not None:  # none may ever have run there: "had already ended" misleads
            _lines([f"Nothing to cancel: pool {pool} has no queued or running job."])
        elif already:
            _lines([
                f"Nothing to change: job(s) {_ids(already)} are already being cancelled, "
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
        click.echo(f"Cancelled {len(done)} queued job(s): {_ids(done)}")
    if stopping:
        click.echo(
            f"Stopping {len(stopping)} running job(s): {_ids(stopping)} "
            "(the scheduler records them as cancelled once they exit)"
        )
    for job in away:
        where = job.place.describe() if job.place else "another place"
        _lines([
            f"Job {job.id} runs on {where}, not here: it cannot be signalled from here. Its "
            "cancel is recorded: a scheduler there stops it and records it as cancelled. If "
            f"that place is gone for good: poolform jobs cancel --gone {job.id}"
        ])  # fmt: skip


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


# -- pools -----------------------------------------------------------------------------------


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
        _echo_json(pools_json(found))
        return
    if not found.pools and name is None:
        # State is there (job_context refuses a configuration never applied): its last apply
        # left no pool, and "apply first" would be wrong.
        click.echo("No pools are applied: the applied configuration declares none.")
    from reconciler.scheduler.text import deleted_pools, pool_usage

    bars = sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
    for pool in found.pools:
        _lines(pool_usage(pool, bars))
    _lines(deleted_pools(found.deleted))


# -- scheduler -------------------------------------------------------------------------------


@click.group()
def scheduler() -> None:
    """The scheduler loop that admits, starts and preempts jobs."""


@scheduler.command("run")
@click.option("--once", is_flag=True, help="Run one cycle and exit (jobs keep running).")
@click.option(
    "--interval",
    metavar="SECONDS",
    type=Seconds(0.01, 3600),
    default=1.0,
    show_default=True,
    help="Seconds between cycles.",
)
@click.option(
    "--grace",
    type=Duration(),
    default="30s",
    show_default=True,
    help="Between SIGTERM and SIGKILL when preempting or cancelling.",
)
@click.option(
    "--max-bypass",
    metavar="N",
    type=Integer(0, 1_000_000),
    default=8,
    show_default=True,
    help="Admissions that may pass a waiting job before capacity is held for it.",
)
@click.option(
    "--max-running",
    metavar="N",
    type=Integer(1, 1_000_000),
    default=256,
    show_default=True,
    help="Jobs running at once at most, whatever the pools allow: each is a local process.",
)
@click.option(
    "--pass-env",
    "pass_env",
    multiple=True,
    metavar="NAME",
    callback=env_names_value,
    help="A variable of this environment its jobs get too (repeatable); by default they get "
    "only PATH, HOME, USER, LOGNAME, LANG, LC_*, TZ, TMPDIR, SHELL, TERM and their envs.",
)
@dir_option
def scheduler_run(
    once: bool,
    interval: float,
    grace: float,
    max_bypass: int,
    max_running: int,
    pass_env: tuple[str, ...],
    directory: Path | None,
) -> None:
    """Watch the applied pools and the queue; admit, start and preempt jobs. Stop with Ctrl-C
    or SIGTERM: running jobs keep running, and the next run finds them."""
    from reconciler.scheduler.leader import run_led
    from reconciler.scheduler.loop import LoopSettings

    settings = LoopSettings(grace=grace, max_bypass=max_bypass, max_running=max_running)
    stop = {"asked": False, "interrupted": False}

    def ask_stop(signum: int, _frame: object) -> None:
        stop["asked"] = True
        stop["interrupted"] |= signum == signal.SIGINT

    def nap(seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not stop["asked"] and time.monotonic() < deadline:
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))

    def started() -> None:  # said once this run holds the lock: never before a refusal
        if not once:
            from reconciler.scheduler.jobs import here

            place = here(ctx)
            _lines([
                f"scheduler: watching {ctx.state_dir.parent} every {interval:g}s "
                "(Ctrl-C stops it; running jobs keep running)"
                + (f"; jobs run on {place.describe()}" if place is not None else "")
            ])  # fmt: skip

    ctx = job_context(directory, pass_env=pass_env)
    previous = [signal.signal(s, ask_stop) for s in (signal.SIGINT, signal.SIGTERM)]
    try:
        run_led(
            ctx,
            once=once,
            interval=interval,
            settings=settings,
            on_cycle=lambda r: _report(r, once),
            should_stop=lambda: stop["asked"],
            sleep=nap,
            announce=lambda line: click.echo(line, err=True),
            on_start=started,
        )
    finally:
        for signum, handler in zip((signal.SIGINT, signal.SIGTERM), previous, strict=True):
            signal.signal(signum, handler)
        ctx.close()
    if stop["asked"]:
        # Said for SIGTERM too: a service's log then tells a clean stop from a crash.
        click.echo(
            "scheduler stopped; running jobs keep running and the next run finds them", err=True
        )
    if stop["interrupted"]:
        # Ctrl-C ends the run as it ends any command (exit 130, "interrupted"), after the
        # cycle under way has finished and been recorded; SIGTERM is a service's normal stop.
        raise KeyboardInterrupt


def _report(report: CycleReport, always: bool) -> None:
    from reconciler.printable import one_line
    from reconciler.scheduler.text import cycle_line, elsewhere_lines, input_lines

    for line in (*([] if always else input_lines(report)), *elsewhere_lines(report)):
        click.echo(one_line(line), err=True)
    if report.eventful or always:
        click.echo(cycle_line(report))
    if always and report.unreadable is not None:
        # One cycle asked for, and it could decide nothing: an error (after the watch of the
        # running jobs), as a job command's read of that state is.
        raise PoolformError(report.unreadable)
