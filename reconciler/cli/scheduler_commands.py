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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from reconciler.errors import PoolformError

if TYPE_CHECKING:
    from reconciler.scheduler.context import SchedulerContext
    from reconciler.scheduler.jobs import JobDetail
    from reconciler.scheduler.loop import CycleReport
    from reconciler.scheduler.pools import PoolStatus
    from reconciler.scheduler.store import JobRecord
    from state import StateSnapshot

STATUSES = ("queued", "admitted", "running", "succeeded", "failed", "cancelled", "rejected")


def dir_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--dir",
        "directory",
        type=click.Path(path_type=Path, file_okay=False),
        default=".",
        show_default=True,
        help="The configuration directory (its applied state is what jobs run on).",
    )(function)


def json_option(function: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")(
        function
    )


def _duration(text: str) -> float:
    from schemas.quantities import parse_duration

    try:
        return float(parse_duration(text))
    except ValueError as error:
        raise click.BadParameter(str(error)) from None


def _context(directory: Path) -> SchedulerContext:
    """The scheduler's store and executor beside the configuration's state, reading state
    through one consistent read per call (no lock, no serial change)."""
    from reconciler.loading import load_configuration
    from reconciler.scheduler.context import open_context
    from reconciler.workspace import open_state, state_path

    configuration = load_configuration(directory)
    path = state_path(configuration)

    def read_state() -> StateSnapshot | None:
        if configuration.cluster.state.backend == "sqlite" and not path.exists():
            return None
        backend = open_state(configuration)
        try:
            return backend.read()
        finally:
            backend.close()

    return open_context(path.parent, read_state)


def _echo_json(data: object) -> None:
    click.echo(json.dumps(data, indent=2, sort_keys=True))


def _ids(jobs: list[JobRecord]) -> str:
    ids = [j.id for j in jobs]
    if len(ids) > 2 and ids == list(range(ids[0], ids[-1] + 1)):
        return f"{ids[0]}-{ids[-1]}"
    return ", ".join(map(str, ids))


# -- jobs ------------------------------------------------------------------------------------


@click.group()
def jobs() -> None:
    """Submit jobs to the applied pools, and watch, explain and cancel them."""


@jobs.command("submit")
@click.argument("job_file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--pool", help="Run on this pool (overrides the job file).")
@click.option("--subject", help="Account to this subject's policy (overrides the job file).")
@click.option("--num-jobs", type=click.IntRange(1, 100_000), help="Submit N jobs, ranks 0..N-1.")
@click.option("--priority", type=click.IntRange(-1_000_000, 1_000_000), help="Higher wins.")
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
    directory: Path,
) -> None:
    """Queue a job (no running scheduler needed); exit 1 if no pool could ever run it."""
    from reconciler.scheduler import jobs as usecases
    from reconciler.scheduler.jobfile import Overrides
    from reconciler.scheduler.views import submitted_json

    ctx = _context(directory)
    try:
        overrides = Overrides(pool, subject, num_jobs, priority, preemptible)
        result = usecases.submit(ctx, job_file, overrides)
    finally:
        ctx.close()
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
        click.echo(
            f"Submitted {first.name}{ranks} to pool {first.pool}: job id(s) {_ids(result.jobs)}"
        )


@jobs.command("list")
@click.option("--pool", help="Only jobs on this pool.")
@click.option("--status", type=click.Choice(STATUSES), help="Only jobs with this status.")
@json_option
@dir_option
def jobs_list(pool: str | None, status: str | None, as_json: bool, directory: Path) -> None:
    """Every job, oldest first, with its status and why it waits."""
    from reconciler.scheduler import jobs as usecases
    from reconciler.scheduler.model import Status
    from reconciler.scheduler.views import list_json

    ctx = _context(directory)
    try:
        found = usecases.list_jobs(ctx, pool, Status(status) if status else None)
    finally:
        ctx.close()
    if as_json:
        _echo_json(list_json(found))
        return
    rows = [("ID", "NAME", "RANK", "STATUS", "POOL", "PRIO", "WORKER", "REASON")]
    for job in found:
        why = job.reason.message if job.reason is not None else ""
        code = "" if job.exit_code is None else f" (exit {job.exit_code})"
        rows.append(
            (
                str(job.id),
                job.name,
                str(job.rank),
                job.status.value + code,
                job.pool or "-",
                "-" if job.priority is None else str(job.priority),
                job.worker or "-",
                why,
            )
        )
    _table(rows)


def _table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(widths[i]) for i, cell in enumerate(row[:-1])]
        click.echo("  ".join([*cells, row[-1]]).rstrip())


@jobs.command("show")
@click.argument("job_id", type=int)
@json_option
@dir_option
def jobs_show(job_id: int, as_json: bool, directory: Path) -> None:
    """A job, why it is not running (one line per candidate pool), and its history."""
    from reconciler.scheduler import jobs as usecases
    from reconciler.scheduler.views import detail_json

    ctx = _context(directory)
    try:
        detail = usecases.show(ctx, job_id)
    finally:
        ctx.close()
    if as_json:
        _echo_json(detail_json(detail))
    else:
        _show_text(detail)


def _show_text(detail: JobDetail) -> None:
    from reconciler.scheduler.explain import label
    from reconciler.scheduler.views import iso

    job = detail.job
    click.echo(f"Job {job.id}: {job.name} (rank {job.rank} of {job.num_jobs})")
    click.echo(f"  status     {job.status.value}")
    if job.reason is not None:
        click.echo(f"  reason     {job.reason.code.value}: {job.reason.message}")
    where = job.pool or "-"
    if job.worker:
        where += f", worker {job.worker}"
    click.echo(f"  pool       {where}")
    if job.policy and not job.policy.endswith("/*"):
        click.echo(f"  policy     {job.policy} (subject {job.subject})")
    kind = "preemptible" if job.request.preemptible else "non-preemptible"
    click.echo(
        f"  priority   {job.priority if job.priority is not None else '-'}, {kind}, "
        f"{job.retries_left} of {job.retries} retries left"
    )
    if job.exit_code is not None:
        click.echo(f"  exit code  {job.exit_code}")
    if detail.unroutable is not None:
        click.echo(f"  no route   {detail.unroutable.message}")
    if detail.candidates:
        click.echo("Candidate pools:")
        for line in detail.candidates:
            click.echo(f"  {label(line)}: {line.text}")
    click.echo("History:")
    for event in detail.events:
        click.echo(f"  {iso(event.time)}  {event.status.value:<9}  {event.message}")


@jobs.command("cancel")
@click.argument("job_ids", type=int, nargs=-1)
@click.option("--pool", help="Cancel every queued and running job of this pool.")
@click.option("--grace", default="30s", show_default=True, help="SIGTERM, then SIGKILL after.")
@dir_option
def jobs_cancel(job_ids: tuple[int, ...], pool: str | None, grace: str, directory: Path) -> None:
    """Cancel jobs: queued ones at once; running ones get SIGTERM, then SIGKILL after --grace."""
    from reconciler.scheduler import jobs as usecases

    seconds = _duration(grace)
    ctx = _context(directory)
    try:
        changed = usecases.cancel(ctx, list(job_ids), pool, seconds)
    finally:
        ctx.close()
    if not changed:
        click.echo("Nothing to cancel: the job(s) had already ended.")
        return
    done = [j for j in changed if j.status.value == "cancelled"]
    stopping = [j for j in changed if j.status.value != "cancelled"]
    if done:
        click.echo(f"Cancelled {len(done)} queued job(s): {_ids(done)}")
    if stopping:
        click.echo(
            f"Stopping {len(stopping)} running job(s): {_ids(stopping)} "
            "(the scheduler records them as cancelled once they exit)"
        )


@jobs.command("logs")
@click.argument("job_id", type=int)
@click.option("--follow", "-f", is_flag=True, help="Keep streaming until the job ends.")
@dir_option
def jobs_logs(job_id: int, follow: bool, directory: Path) -> None:
    """A job's output (every attempt), as captured in its log file."""
    from reconciler.scheduler import jobs as usecases

    ctx = _context(directory)
    try:
        for chunk in usecases.logs(ctx, job_id, follow, time.sleep):
            click.echo(chunk, nl=False)
    finally:
        ctx.close()


# -- pools -----------------------------------------------------------------------------------


@click.group()
def pools() -> None:
    """Capacity and usage of the applied pools."""


@pools.command("status")
@click.argument("name", required=False)
@json_option
@dir_option
def pools_status(name: str | None, as_json: bool, directory: Path) -> None:
    """Per pool and key: capacity, reserved, used, borrowed, queued demand; per policy its share."""
    from reconciler.scheduler.pools import pools_status as usecase
    from reconciler.scheduler.views import pools_json

    ctx = _context(directory)
    try:
        found = usecase(ctx, name)
    finally:
        ctx.close()
    if as_json:
        _echo_json(pools_json(found))
        return
    if not found:
        click.echo("No pools are applied yet (poolform apply first).")
    bars = sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
    for pool in found:
        _pool_text(pool, bars)


def _bar(used: int, capacity: int, width: int = 20) -> str:
    if capacity <= 0:
        return ""
    filled = min(width, round(width * used / capacity))
    return "[" + "#" * filled + "." * (width - filled) + "]"


def _pool_text(pool: PoolStatus, bars: bool) -> None:
    from reconciler.scheduler.amounts import show, show_all

    click.echo(f"{pool.name} ({pool.kind} pool): {pool.running} running, {pool.queued} queued")
    rows = [("  KEY", "CAPACITY", "RESERVED", "USED", "BORROWED", "QUEUED", "")]
    for k in pool.keys:
        amount = [
            show(k.key, v).split(" ", 1)[1]
            for v in (k.capacity, k.reserved, k.used, k.borrowed, k.queued)
        ]
        rows.append((f"  {k.key}", *amount, _bar(k.used, k.capacity) if bars else ""))
    _table(rows)
    for share in pool.policies:
        limit = "none" if share.limit is None else show_all(share.limit)
        click.echo(
            f"  policy {share.name} ({share.subject}, priority {share.priority}): "
            f"reserved {show_all(share.reserved)}; limit {limit}; "
            f"using {show_all(share.used)}"
        )
    for worker, job in pool.workers:
        click.echo(f"  worker {worker}: {'job ' + str(job) if job else 'free'}")


# -- scheduler -------------------------------------------------------------------------------


@click.group()
def scheduler() -> None:
    """The scheduler loop that admits, starts and preempts jobs."""


@scheduler.command("run")
@click.option("--once", is_flag=True, help="Run one cycle and exit (jobs keep running).")
@click.option(
    "--interval",
    type=click.FloatRange(0.01, 3600),
    default=1.0,
    show_default=True,
    help="Seconds between cycles.",
)
@click.option(
    "--grace",
    default="30s",
    show_default=True,
    help="Between SIGTERM and SIGKILL when preempting or cancelling.",
)
@dir_option
def scheduler_run(once: bool, interval: float, grace: str, directory: Path) -> None:
    """Watch the applied pools and the queue; admit, start and preempt jobs. Stop with Ctrl-C
    or SIGTERM: running jobs keep running, and the next run finds them."""
    from reconciler.scheduler.loop import LoopSettings
    from reconciler.scheduler.pools import run_scheduler

    settings = LoopSettings(grace=_duration(grace))
    stop = {"asked": False}

    def ask_stop(_signum: int, _frame: object) -> None:
        stop["asked"] = True

    def nap(seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not stop["asked"] and time.monotonic() < deadline:
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))

    ctx = _context(directory)
    previous = [signal.signal(s, ask_stop) for s in (signal.SIGINT, signal.SIGTERM)]
    try:
        if not once:
            click.echo(
                f"scheduler: watching {directory} every {interval:g}s "
                "(Ctrl-C stops it; running jobs keep running)"
            )
        run_scheduler(
            ctx,
            once=once,
            interval=interval,
            settings=settings,
            on_cycle=lambda r: _report(r, once),
            should_stop=lambda: stop["asked"],
            sleep=nap,
        )
    finally:
        for signum, handler in zip((signal.SIGINT, signal.SIGTERM), previous, strict=True):
            signal.signal(signum, handler)
        ctx.close()


def _report(report: CycleReport, always: bool) -> None:
    if not (report.eventful or always):
        return
    parts = []
    if report.serial_moved:
        parts.append(f"applied configuration changed (state serial {report.serial})")
    for label, ids in (
        ("admitted", report.admitted),
        ("preempting", report.preempted),
        ("rejected", report.rejected),
        ("killed", report.killed),
    ):
        if ids:
            parts.append(f"{label} {', '.join(map(str, ids))}")
    if report.ended:
        parts.append("ended " + ", ".join(f"{i} ({s.value})" for i, s in report.ended))
    parts.append(f"{report.queued} queued, {report.running} holding capacity")
    click.echo(f"cycle {report.cycle}: " + "; ".join(parts))
