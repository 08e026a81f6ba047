"""Jobs running at another place, as the scheduler here meets them: a cancel with no grace
that nobody here may carry out, logs that are not here, and this machine's process limit
(`--max-running`), which counts processes on this machine. Two hosts share one directory
(SQLite), told apart by POOLFORM_HOST_ID."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, group_alive, job_file, job_group
from tests.scheduler.scenario import TERMINAL, ok, statuses, wait_until

A, B = {"POOLFORM_HOST_ID": "host-a"}, {"POOLFORM_HOST_ID": "host-b"}


def _run(pf: Pf, directory: Path, host: dict[str, str], *extra: str) -> str:
    result = pf("scheduler", "run", "--once", *extra, "--chdir", directory, env=host)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_cancel_without_grace_from_another_host_is_carried_out_only_by_the_jobs_host(
    pf: Pf, tmp_path: Path
) -> None:
    """`jobs cancel --grace 0` on host-b of host-a's job: its deadline passes at once, yet
    neither the command nor host-b's scheduler may signal a process group they cannot see
    (its pid means another process there); host-a's scheduler stops it and records it."""
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: sleep 60\n")
    ok("jobs", "submit", job, "--chdir", directory)
    _run(pf, directory, A)
    group = job_group(directory, 1)
    cancel = pf("jobs", "cancel", "1", "--grace", "0", "--chdir", directory, env=B)
    assert cancel.returncode == 0, cancel.stderr
    assert "it cannot be signalled from here" in cancel.stdout
    assert "Stopping" not in cancel.stdout
    for _ in range(3):
        _run(pf, directory, B)
    assert group_alive(group) and statuses(directory) == {1: "running"}
    for _ in range(100):
        _run(pf, directory, A)
        if statuses(directory)[1] in TERMINAL:
            break
    assert statuses(directory) == {1: "cancelled"}
    wait_until("the job's group is gone", lambda: not group_alive(group))


def test_logs_of_a_job_that_ran_elsewhere_say_where_and_print_only_what_is_here(
    pf: Pf, tmp_path: Path
) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo from-a\n")
    ok("jobs", "submit", job, "--chdir", directory)
    for _ in range(100):
        _run(pf, directory, A)
        if statuses(directory)[1] in TERMINAL:
            break
    here = pf("jobs", "logs", "1", "--chdir", directory, env=A)
    assert (here.returncode, here.stdout, here.stderr) == (0, "from-a\n", "")
    there = pf("jobs", "logs", "1", "--chdir", directory, env=B)
    assert there.returncode == 0
    assert "job 1's latest attempt ran on host" in there.stderr and "(host-a)" in there.stderr
    assert there.stdout == "from-a\n"  # the directory is shared here: what is here is all


def test_jobs_running_at_another_place_take_no_process_slot_here(pf: Pf, tmp_path: Path) -> None:
    """host-a runs two jobs; host-b, whose machine runs none, may start two of its own under
    `--max-running 2` (the README: each is a process on this machine). After a takeover, a
    dead host's jobs would otherwise stop the new leader from starting anything."""
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: sleep 30\n")
    ok("jobs", "submit", job, "--num-jobs", "4", "--chdir", directory)
    assert "admitted 1, 2" in _run(pf, directory, A, "--max-running", "2")
    assert "admitted 3, 4" in _run(pf, directory, B, "--max-running", "2")
