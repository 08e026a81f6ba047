"""A full disk under the state: opening a SQLite state writes (its -wal and -shm files), SQLite
then says `disk I/O error`, and every command reading the state said `... is not a readable
poolform state database: disk I/O error`, which reads as a damaged state (restore a backup?).
It now says the disk holding it is full, that the state is unchanged, and what to do.

The state lives on a small tmpfs, mounted in a mount namespace of the test's own (as
test_scheduler_full_jobs_dir20), applied there and then filled to the last block."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.adversarial.conftest import EXAMPLES
from tests.adversarial.test_scheduler_full_jobs_dir20 import namespaces  # noqa: F401 (fixture)
from tests.scenario.installed import poolform_command

FILLED = """set -e
mount -t tmpfs -o size=2m poolform-full "$1"
cp -r "$2" "$1/q"
"$3" apply "$1/q" --auto-approve > /dev/null
dd if=/dev/zero of="$1/fill" bs=4k 2> /dev/null || true
shift 3
exec "$@"
"""


@pytest.mark.usefixtures("namespaces")
def test_a_state_on_a_full_disk_is_said_to_be_on_a_full_disk_not_damaged(tmp_path: Path) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    poolform = poolform_command()
    assert len(poolform) == 1  # the installed script, as the namespace's shell runs it
    script = f'"{poolform[0]}" plan "{disk}/q" --json; "{poolform[0]}" show "{disk}/q"'
    result = subprocess.run(
        ["unshare", "-m", "--propagation", "private", "sh", "-c", FILLED, "sh", str(disk),
         str(EXAMPLES / "quickstart"), poolform[0], "sh", "-c", script],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "CI": "true", "NO_COLOR": "1"},
    )  # fmt: skip

    said = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(said) == 2, result.stderr
    for line in said:
        assert "the disk holding it is full" in line and "the state itself is unchanged" in line
        assert "not a readable poolform state database" not in line
    assert "the disk holding it is full" in result.stdout  # plan --json's error document
