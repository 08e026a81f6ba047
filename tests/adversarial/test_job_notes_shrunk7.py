"""A plan that shrinks a pool below what its running jobs hold said "the pool starts nothing
new until they drain below it". The scheduler holds back only the jobs that ask for a key
that is over (fit.py): a job asking for none of them still starts there. The note now names
the keys, and this checks it against what the real scheduler then does."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import applied, job_file, listed
from tests.scenario.installed import poolform
from tests.scheduler.scenario import ok

NOTE = (
    "resource_pool.seats shrinks below what 2 running jobs (1, 2) hold (seat 2 held, seat 1 "
    "after): none is stopped, and the pool starts no job that asks for seat until they drain "
    "below it"
)


def test_a_shrunk_pool_note_names_what_it_holds_back_and_the_scheduler_agrees(
    tmp_path: Path,
) -> None:
    directory = applied(tmp_path)
    seated = job_file(
        tmp_path, "kind: Job\nname: s\npool: seats\nresources: {custom: {seat: 1}}\nrun: sleep 60\n"
    )
    plain = job_file(tmp_path, "kind: Job\nname: p\npool: seats\nrun: sleep 60\n", "p.yaml")
    for _ in range(2):
        ok("jobs", "submit", seated, "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    config = directory / "config.yaml"
    config.write_text(config.read_text().replace("seat: 2", "seat: 1"))

    planned = poolform("apply", "--auto-approve", "--chdir", directory)
    assert planned.returncode == 0, planned.stderr
    assert NOTE in planned.stdout.splitlines(), planned.stdout

    ok("jobs", "submit", seated, "--chdir", directory)  # 3: asks for seat
    ok("jobs", "submit", plain, "--chdir", directory)  # 4: asks for none
    ok("scheduler", "run", "--once", "--chdir", directory)
    try:
        status = {job["id"]: job["status"] for job in listed(directory)}
        assert status == {1: "running", 2: "running", 3: "queued", 4: "running"}, status
    finally:
        ok("jobs", "cancel", "--pool", "seats", "--grace", "1s", "--chdir", directory)
