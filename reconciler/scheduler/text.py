"""Text for people: jobs tables, a job's story, pool usage, a cycle's summary. Pure: each
function returns lines; the CLI prints them."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from reconciler.scheduler.amounts import show, show_all
from reconciler.scheduler.explain import label
from reconciler.scheduler.jobs import JobDetail
from reconciler.scheduler.loop import CycleReport
from reconciler.scheduler.model import JobRequest
from reconciler.scheduler.pools import DeletedPool, PoolStatus
from reconciler.scheduler.store import JobRecord, Listed
from reconciler.scheduler.views import iso


def table(rows: Sequence[Sequence[str]]) -> list[str]:
    """Columns aligned; the last one (free text) is left as it is."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return [
        "  ".join([*(c.ljust(widths[i]) for i, c in enumerate(row[:-1])), row[-1]]).rstrip()
        for row in rows
    ]


def id_range(jobs: Sequence[JobRecord]) -> str:
    """The jobs' ids, runs of consecutive ones as ranges ("7, 9-10006"): a cancel of a batch
    with a gap printed ten thousand ids on one line."""
    return ", ".join(_runs([(j.id, "") for j in jobs]))


_JOBS_HEADER = ("ID", "NAME", "RANK", "STATUS", "POOL", "PRIO", "WORKER", "REASON")


def _job_cells(job: Listed) -> tuple[str, ...]:
    code = "" if job.exit_code is None else f" (exit {job.exit_code})"
    return (
        str(job.id),
        job.name,
        str(job.rank),
        job.status.value + code,
        job.pool or "-",
        "-" if job.priority is None else str(job.priority),
        job.worker or "-",
        job.reason.message if job.reason is not None else "",
    )


def jobs_table(jobs: Sequence[Listed]) -> Iterator[str]:
    """`table` of the jobs, one line at a time: the cells are made twice (for the widths,
    then for the line) rather than held, as a queue's whole history is listed."""
    widths = [len(cell) for cell in _JOBS_HEADER[:-1]]
    for job in jobs:
        for i, cell in enumerate(_job_cells(job)[:-1]):
            widths[i] = max(widths[i], len(cell))
    for row in itertools.chain([_JOBS_HEADER], map(_job_cells, jobs)):
        yield "  ".join([*(c.ljust(widths[i]) for i, c in enumerate(row[:-1])), row[-1]]).rstrip()


def asked(request: JobRequest) -> str:
    """What a job asked for, as submitted: amounts, GPU models, instance type and market
    (the last three route it, so a user must be able to check them)."""
    parts = [show_all(dict(request.resources))] if request.resources else []
    if request.accelerators:
        parts.append("accelerator " + " or ".join(request.accelerators))
    if request.instance_type is not None:
        parts.append(f"instance type {request.instance_type}")
    if request.use_spot is not None:
        parts.append("spot machines" if request.use_spot else "on-demand machines")
    return "; ".join(parts) or "nothing named (any room its pool has)"


def job_story(detail: JobDetail) -> list[str]:
    job = detail.job
    lines = [f"Job {job.id}: {job.name} (rank {job.rank} of {job.num_jobs})"]
    lines.append(f"  status     {job.status.value}")
    if job.reason is not None:
        code, message = job.reason.code.value, job.reason.message
        # A reason whose message is its code (`cancelled`) is said once.
        lines.append(f"  reason     {code}" + ("" if message == code else f": {message}"))
    where = (job.pool or "-") + (f", worker {job.worker}" if job.worker else "")
    lines.append(f"  pool       {where}")
    if job.policy and not job.policy.endswith("/*"):
        lines.append(f"  policy     {job.policy} (subject {job.subject})")
    elif job.subject:  # no policy holds it yet (queued, rejected): what it was submitted for
        lines.append(f"  subject    {job.subject}")
    lines.append(f"  asks for   {asked(job.request)}")
    kind = "preemptible" if job.request.preemptible else "non-preemptible"
    priority = "-" if job.priority is None else str(job.priority)
    lines.append(
        f"  priority   {priority}, {kind}, {job.retries_left} of {job.retries} retries left"
    )
    if job.place is not None:
        runs = "runs on" if job.status.value in ("admitted", "running") else "ran on"
        lines.append(f"  place      {runs} {job.place.describe()}")
    if detail.elsewhere:
        lines.append(
            "  elsewhere  not this command's place: its process cannot be seen or signalled "
            "from here; it holds its capacity until a scheduler there records it (or, if that "
            f"place is gone: poolform jobs cancel --gone {job.id})"
        )
    if job.exit_code is not None:
        lines.append(f"  exit code  {job.exit_code}")
    if detail.unroutable is not None:
        lines.append(f"  no route   {detail.unroutable.message}")
    if detail.candidates:
        lines.append("Candidate pools:")
        lines += [f"  {label(c)}: {c.text}" for c in detail.candidates]
    lines.append("History:")
    lines += [f"  {iso(e.time)}  {e.status.value:<9}  {e.message}" for e in detail.events]
    return lines


def _bar(used: int, capacity: int, width: int = 20) -> str:
    if capacity <= 0:
        return ""
    filled = min(width, round(width * used / capacity))
    return "[" + "#" * filled + "." * (width - filled) + "]"


def pool_usage(pool: PoolStatus, bars: bool) -> list[str]:
    lines = [f"{pool.name} ({pool.kind} pool): {pool.running} running, {pool.queued} queued"]
    rows: list[tuple[str, ...]] = [
        ("  KEY", "CAPACITY", "RESERVED", "USED", "BORROWED", "QUEUED", "")
    ]
    for k in pool.keys:
        values = (k.capacity, k.reserved, k.used, k.borrowed, k.queued)
        amounts = [show(k.key, v).split(" ", 1)[1] for v in values]
        rows.append((f"  {k.key}", *amounts, _bar(k.used, k.capacity) if bars else ""))
    lines += table(rows)
    for share in pool.policies:
        limit = "none" if share.limit is None else show_all(share.limit)
        lines.append(
            f"  policy {share.name} ({share.subject}, priority {share.priority}): "
            f"reserved {show_all(share.reserved)}; limit {limit}; using {show_all(share.used)}"
        )
    for worker, job in pool.workers:
        lines.append(f"  worker {worker}: {'job ' + str(job) if job else 'free'}")
    return lines


def deleted_pools(deleted: Sequence[DeletedPool]) -> list[str]:
    """The pools an apply removed whose jobs still run (they hold no capacity of any pool)."""
    if not deleted:
        return []
    lines = ["deleted pools still running jobs (an apply removed them; they hold no capacity):"]
    for pool in deleted:
        ids = ", ".join(_runs([(i, "") for i in pool.jobs]))
        lines.append(
            f"  {pool.name}: {len(pool.jobs)} running (job{'s' * (len(pool.jobs) > 1)} {ids})"
        )
    return lines


def _runs(items: Sequence[tuple[int, str]]) -> list[str]:
    """Consecutive ids with the same label as one range ("1-256 (succeeded)"): a cycle over a
    batch admits or ends hundreds at once."""
    out: list[str] = []
    start = 0
    for i in range(1, len(items) + 1):
        if i < len(items) and items[i] == (items[i - 1][0] + 1, items[i - 1][1]):
            continue
        first, label = items[start]
        last = items[i - 1][0]
        span = (
            str(first)
            if first == last
            else f"{first}, {last}"
            if last == first + 1
            else f"{first}-{last}"
        )
        out.append(f"{span}{label}")
        start = i
    return out


def elsewhere_lines(report: CycleReport) -> list[str]:
    """Once per attempt a scheduler finds running at another place: what it does about it."""
    return [
        f"scheduler: job {job.id} (attempt {job.attempt}) runs on {job.place.describe()}, not "
        "here: this scheduler cannot see or stop it there, so it leaves it running, holding "
        "its capacity, until a scheduler there records it (or, if that place is gone for "
        f"good: poolform jobs cancel --gone {job.id})"
        for job in report.newly_elsewhere
        if job.place is not None
    ]


def input_lines(report: CycleReport) -> list[str]:
    """Once when the applied state (or the local cloud's workers) cannot be read, once for
    each other reason, and once when it can again: not at every cycle of a long outage."""
    if report.unreadable is not None and report.unreadable_news:
        return [
            f"scheduler: cannot read the applied configuration: {report.unreadable}; "
            "watching the running jobs, deciding nothing, reading it again every cycle"
        ]
    if report.readable_again:
        return ["scheduler: the applied configuration is readable again; deciding again"]
    if report.deferred:
        return [
            f"scheduler: this machine cannot start jobs now ({report.shortage}): they wait "
            "in the queue, no retry used; running jobs are watched, and starting is tried "
            "again in a few seconds"
        ]
    return []


def cycle_line(report: CycleReport) -> str:
    parts = []
    if report.unreadable is not None:
        parts.append("applied state unreadable: nothing decided")
    elif report.no_state:
        parts.append("no applied state found (poolform apply, or is it moved?): nothing decided")
    elif report.shortage is not None and not report.deferred:
        parts.append("paused after a shortage: nothing decided")
    elif report.serial_moved:
        parts.append(f"applied configuration changed (state serial {report.serial})")
    for word, ids in (
        ("admitted", report.admitted),
        ("preempting", report.preempted),
        ("stopping (worker removed)", report.removed),
        ("rejected", report.rejected),
        ("killed", report.killed),
        ("queued again unstarted (this machine is short)", report.deferred),
    ):
        if ids:
            parts.append(f"{word} {', '.join(_runs([(i, '') for i in ids]))}")
    if report.ended:
        ended = [(i, f" ({status.value})") for i, status in report.ended]
        parts.append("ended " + ", ".join(_runs(ended)))
    parts.append(f"{report.queued} queued, {report.running} holding capacity")
    return f"cycle {report.cycle}: " + "; ".join(parts)
