"""`jobs logs ID` (no --follow) read on to the end of whatever was written while it read: a
job writing faster than the terminal (or a slow ssh link) shows its output never let the
command end. Now it prints the log as it was when first read; --follow is what reads on."""

from __future__ import annotations

from pathlib import Path

from reconciler.cli.scheduler_context import job_context
from reconciler.scheduler.jobs import logs
from tests.adversarial.scheduler_setup import applied, job_file
from tests.scheduler.scenario import cycle_until, ok, statuses, wait_until

WRITTEN = 3_000_000  # bytes: three reads of the log's 1 MiB


def test_logs_without_follow_ends_at_what_was_written_when_it_began(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    ends = tmp_path / "ends"
    job = job_file(tmp_path, (
        "kind: Job\nname: chatty\npool: seats\n"
        f"run: head -c {WRITTEN} /dev/zero | tr '\\0' a; while [ ! -e {ends} ]; do sleep 0.05; done\n"
    ))  # fmt: skip
    ok("jobs", "submit", job, "--chdir", directory)
    log = directory / ".poolform" / "jobs" / "1" / "output.log"
    try:
        ok("scheduler", "run", "--once", "--chdir", directory)
        wait_until("it wrote", lambda: log.exists() and log.stat().st_size == WRITTEN)
        ctx = job_context(directory)
        try:
            chunks = logs(ctx, 1, False, lambda _: None)
            read = len(next(chunks))
            with log.open("ab") as more:  # the job goes on writing while the command reads
                more.write(b"b" * WRITTEN)
            read += sum(len(chunk) for chunk in chunks)
        finally:
            ctx.close()
        assert read == WRITTEN
    finally:
        ends.touch()
    cycle_until(directory, "it ended", lambda: statuses(directory) == {1: "succeeded"})
