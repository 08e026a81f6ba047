"""`jobs logs` against a job directory someone tampered with: a deleted log, a log replaced by
a symlink to a secret or by a FIFO, a job directory replaced by a symlink. The log is the
job's own regular file or nothing: `jobs logs` never follows a link out of the job's
directory, never blocks on a FIFO, and the scheduler never appends a job's output through a
link planted where its log will be. Also: a 100 MB log streams whole, and Ctrl-C during
`--follow` ends the command (exit 130) and leaves the job running."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, group_alive, job_file, job_group, refused
from tests.scenario.installed import start
from tests.scheduler.scenario import TERMINAL, cycle_until, ok, statuses, wait_until

SECRET = "root:$6$not-for-job-logs$:19000:0:99999:7:::\n"


def _finished(tmp_path: Path, run: str = "echo from the job") -> tuple[Path, Path]:
    """An applied configuration with one job that ran to its end; returns it and the job's
    log file."""
    directory = applied(tmp_path)
    job = job_file(tmp_path, f"kind: Job\nname: j\npool: seats\nrun: {run}\n")
    ok("jobs", "submit", job, "--chdir", directory)
    cycle_until(directory, "the job ended", lambda: statuses(directory)[1] in TERMINAL)
    return directory, directory / ".poolform" / "jobs" / "1" / "output.log"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "shadow"
    path.write_text(SECRET)
    return path


def test_a_deleted_log_shows_nothing_and_follow_still_ends(pf: Pf, tmp_path: Path) -> None:
    directory, log = _finished(tmp_path)
    assert log.read_text() == "from the job\n"
    log.unlink()
    for extra in ((), ("--follow",)):
        result = pf("jobs", "logs", "1", *extra, "--chdir", directory, timeout=30)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


@pytest.mark.parametrize("follow", [False, True])
def test_a_log_replaced_by_a_symlink_to_a_secret_is_not_followed(
    pf: Pf, tmp_path: Path, secret: Path, follow: bool
) -> None:
    directory, log = _finished(tmp_path)
    log.unlink()
    log.symlink_to(secret)
    extra = ("--follow",) if follow else ()
    result = pf("jobs", "logs", "1", *extra, "--chdir", directory, timeout=30)
    refused(result, "output.log is not the job's own log file", "not reading it")
    assert "not-for-job-logs" not in result.stdout + result.stderr


def test_a_job_directory_replaced_by_a_symlink_is_not_followed(pf: Pf, tmp_path: Path) -> None:
    directory, log = _finished(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "output.log").write_text(SECRET)  # a regular file, but outside the job's dir
    job_dir = log.parent
    job_dir.rename(tmp_path / "moved")
    job_dir.symlink_to(elsewhere)
    result = pf("jobs", "logs", "1", "--chdir", directory, timeout=30)
    refused(result, "not the job's own log file")
    assert "not-for-job-logs" not in result.stdout


def test_a_log_replaced_by_a_fifo_is_refused_without_blocking(pf: Pf, tmp_path: Path) -> None:
    directory, log = _finished(tmp_path)
    log.unlink()
    os.mkfifo(log)  # no writer ever comes: a blocking open would hang for good
    result = pf("jobs", "logs", "1", "--follow", "--chdir", directory, timeout=30)
    refused(result, "not the job's own log file")


def test_a_symlink_planted_as_a_queued_jobs_log_is_never_written_through(
    pf: Pf, tmp_path: Path, secret: Path
) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo LEAKED\n")
    ok("jobs", "submit", job, "--chdir", directory)
    job_dir = directory / ".poolform" / "jobs" / "1"
    job_dir.mkdir(parents=True, mode=0o700)
    (job_dir / "output.log").symlink_to(secret)
    cycle_until(directory, "the job ended", lambda: statuses(directory)[1] in TERMINAL)
    assert secret.read_text() == SECRET
    shown = pf("jobs", "list", "--json", "--chdir", directory)
    assert '"code": "start_failed"' in shown.stdout, shown.stdout
    assert statuses(directory) == {1: "failed"}


def test_a_100_mb_log_streams_whole(pf: Pf, tmp_path: Path) -> None:
    run = "head -c 100000000 /dev/zero | tr '\\\\0' x; echo"
    directory, log = _finished(tmp_path, f'"{run}"')
    assert statuses(directory) == {1: "succeeded"}
    assert log.stat().st_size == 100_000_001
    result = subprocess.run(
        [*_command(), "jobs", "logs", "1", "--chdir", str(directory)],
        capture_output=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert len(result.stdout) == 100_000_001 and result.stdout.count(b"x") == 100_000_000


def _command() -> list[str]:
    from tests.scenario.installed import poolform_command

    return poolform_command()


def test_ctrl_c_during_follow_ends_the_command_and_leaves_the_job_running(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path)
    job = job_file(
        tmp_path,
        "kind: Job\nname: ticker\npool: seats\nrun: |\n"
        "  while true; do echo tick; sleep 0.05; done\n",
    )
    ok("jobs", "submit", job, "--chdir", directory)
    cycle_until(directory, "the job runs", lambda: statuses(directory)[1] == "running")
    follower = start("jobs", "logs", "1", "--follow", "--chdir", directory)
    assert follower.stdout is not None
    assert follower.stdout.readline() == "tick\n"
    follower.send_signal(signal.SIGINT)
    _, err = follower.communicate(timeout=30)
    assert follower.returncode == 130 and "error: interrupted" in err
    ok("scheduler", "run", "--once", "--chdir", directory)
    assert statuses(directory) == {1: "running"}  # Ctrl-C of a reader stops no job
    ok("jobs", "cancel", "1", "--grace", "1s", "--chdir", directory)
    cycle_until(directory, "the job ended", lambda: statuses(directory)[1] == "cancelled")
    wait_until("nothing ticks", lambda: not group_alive(job_group(directory, 1)))


def test_a_character_straddling_two_reads_is_shown_whole(pf: Pf, tmp_path: Path) -> None:
    """`jobs logs` reads 1 MiB at a time: a UTF-8 character whose bytes fall on both sides of
    a read must not turn into two replacement characters."""
    run = "head -c 1048575 /dev/zero | tr '\\\\0' x; printf '\\\\342\\\\202\\\\254\\\\n'"
    directory, log = _finished(tmp_path, f'"{run}"')
    assert log.read_bytes()[1048575:] == "€\n".encode()
    result = pf("jobs", "logs", "1", "--chdir", directory)
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("x€\n") and "\ufffd" not in result.stdout
