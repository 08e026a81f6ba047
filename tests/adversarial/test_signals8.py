"""SIGTERM's exit code. It ends a command as Ctrl-C does, and exited 130 as Ctrl-C does; a
shell, CI runner or supervisor reads 130 as SIGINT. Now a command SIGTERM ends exits 143
(128 + SIGTERM), and `scheduler run`, for which SIGTERM is the normal stop of a service,
still exits 0."""

from __future__ import annotations

import signal
from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file
from tests.scenario.installed import poolform, start
from tests.scheduler.scenario import ok


def test_sigterm_ends_jobs_logs_follow_with_143(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo ready; sleep 300\n")
    ok("jobs", "submit", job, "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    follow = start("jobs", "logs", "1", "--follow", "--chdir", directory)
    try:
        assert follow.stdout is not None and follow.stderr is not None
        assert follow.stdout.readline() == "ready\n"  # following: its handler is in place
        follow.send_signal(signal.SIGTERM)
        assert follow.wait(timeout=60) == 143, follow.stderr.read()
        err = follow.stderr.read()
        assert "error: interrupted (terminated by SIGTERM)" in err and "Traceback" not in err
    finally:
        follow.kill()
        follow.wait()
        poolform("jobs", "cancel", "1", "--grace", "0s", "--chdir", directory)


def test_sigterm_stops_scheduler_run_with_0(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    scheduler = start("scheduler", "run", "--interval", "0.2", "--chdir", directory)
    try:
        assert scheduler.stdout is not None and scheduler.stderr is not None
        assert scheduler.stdout.readline().startswith("scheduler: watching")  # handler set
        scheduler.send_signal(signal.SIGTERM)
        assert scheduler.wait(timeout=60) == 0, scheduler.stderr.read()
    finally:
        scheduler.kill()
        scheduler.wait()
