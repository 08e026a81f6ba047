"""The queue's disk full as `jobs submit` writes (here: the file size limit of the process,
`ulimit -f`, which SQLite meets as a full disk does). SQLite ends such a transaction itself;
the store then rolled back a transaction that no longer existed, and the error said "cannot
rollback - no transaction is active", hiding the cause. The error names the store and the
I/O failure, exit 1, nothing is queued, and once there is room again the queue works as
before."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file, listed, refused
from tests.scenario.installed import poolform_command


def test_a_submit_that_fills_the_disk_says_so_and_queues_nothing(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path)
    store = directory / ".poolform" / "scheduler.db"
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo\n")
    blocks = store.stat().st_size // 1024 + 4  # room for a few pages, not 1,000 jobs
    command = [*poolform_command(), "jobs", "submit", str(job), "--num-jobs", "1000"]
    full = subprocess.run(
        ["bash", "-c", f'ulimit -f {blocks}; exec "$@"', "submit", *command, "--chdir",
         str(directory)],
        capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}, timeout=120,
    )  # fmt: skip
    stderr = refused(full, str(store), "disk I/O error")
    assert "rollback" not in stderr
    assert listed(directory) == []

    again = pf("jobs", "submit", job, "--chdir", directory)
    assert again.returncode == 0, again.stderr
    assert [job["id"] for job in listed(directory)] == [1]
