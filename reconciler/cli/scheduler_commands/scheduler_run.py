"""scheduler run: the scheduler loop, led by one process at a time, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from reconciler.cli.numbers import Integer
from reconciler.cli.scheduler_context import job_context
from reconciler.cli.scheduler_options import Duration, Seconds, dir_option, env_names_value
from reconciler.errors import PoolformError

if TYPE_CHECKING:
    from reconciler.scheduler.loop import CycleReport

from reconciler.cli.scheduler_commands.shared import echo_lines


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
            echo_lines([
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
