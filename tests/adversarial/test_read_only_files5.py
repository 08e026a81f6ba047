"""The queue or the local cloud on a read-only file (a read-only mount, a container that
mounts `.poolform/` to inspect it, a backup restored read-only). Every job command (and every
plan and drift, for the local cloud) used to stop with an internal error (OSError: Read-only
file system) from making the already private file private again, so nothing read it. Now
reading works, and each write is refused with SQLite's error naming the file (exit 1),
nothing changed. Each `poolform` runs in a mount
namespace of its own (`unshare -m`) where the store is bind-mounted read-only over itself;
skipped where namespaces cannot be made (not root, no unshare)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.adversarial.scheduler_setup import applied, job_file, listed, queue_digest, refused
from tests.scenario.installed import poolform_command

READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'


def read_only(store: Path, *args: object) -> subprocess.CompletedProcess[str]:
    command = ["unshare", "-m", "--propagation", "private", "sh", "-c", READ_ONLY, "sh"]
    return subprocess.run(
        [*command, str(store), *poolform_command(), *map(str, args)],
        capture_output=True, text=True, env={**os.environ, "NO_COLOR": "1"}, timeout=120,
    )  # fmt: skip


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    if shutil.which("unshare") is None:
        pytest.skip("needs unshare -m (root)")
    directory = applied(tmp_path)
    probe = read_only(directory / ".poolform" / "state.db", "version")
    if probe.returncode != 0:
        pytest.skip(f"needs unshare -m and mount (root): {probe.stderr.strip()}")
    return directory


def test_a_read_only_queue_is_read_and_refuses_writes_by_name(
    directory: Path, tmp_path: Path
) -> None:
    store = directory / ".poolform" / "scheduler.db"
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo\n")
    before = queue_digest(directory)

    shown = read_only(store, "jobs", "list", "--chdir", directory)
    assert shown.returncode == 0, shown.stderr
    refused(read_only(store, "jobs", "submit", job, "--chdir", directory),
            f"scheduler store {store}", "readonly database")  # fmt: skip
    assert queue_digest(directory) == before and listed(directory) == []


def test_a_read_only_local_cloud_is_planned_and_checked_for_drift(directory: Path) -> None:
    cloud = directory / ".poolform" / "local-cloud.db"
    before = queue_digest(directory)  # .poolform, WAL companions aside
    planned = read_only(cloud, "plan", directory, "--detailed-exitcode")
    assert planned.returncode == 0, planned.stderr
    drift = read_only(cloud, "drift", directory)
    assert drift.returncode == 0, drift.stderr
    assert queue_digest(directory) == before
