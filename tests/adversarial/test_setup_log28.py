"""A worker `setup` (local provider) that printed a great deal before it failed.

apply shows the last lines of the failed setup's log. It read the whole log for them, decoded
and split into lines, several times its size in memory: a setup that printed 400 MB took
apply 1.7 GB and 12 s to say it failed, and under a memory limit (a CI container, `ulimit -v`)
it would not say it at all. Now the tail is read from the log's end, a bounded read, and
sensitive values are still never shown, also one cut by where that read starts."""

from __future__ import annotations

from pathlib import Path

from providers.local.workers import LOG_NAME, REDACTED, TAIL_BYTES, log_tail
from tests.scenario.installed import poolform_within_memory

GIB = 1 << 30
CONFIG = """kind: Cluster
name: w
provider: local
---
kind: WorkerPool
name: p
pool: {workers: 1}
resources: {instance_type: c5.xlarge}
secrets: {TOKEN: "${env:TOKEN}"}
setup: |
  yes abcdefghijklmnopqrstuvwxyz | head -c 300000000
  echo "last words with $TOKEN"
  exit 3
"""
TOKEN = "tok-5ecret-value-never-shown"


def test_a_setup_that_printed_300_mb_fails_with_its_last_lines_in_bounded_memory(
    tmp_path: Path,
) -> None:
    (tmp_path / "pool.yaml").write_text(CONFIG)

    # A run that reads the log whole cannot fit in a GiB.
    result = poolform_within_memory(
        GIB,
        *("apply", tmp_path, "--auto-approve"),
        env={"PATH": "/usr/bin:/bin", "TOKEN": TOKEN},
        timeout=300,
    )
    said = result.stdout + result.stderr
    assert result.returncode == 1, said
    assert "internal error" not in said and "MemoryError" not in said, said
    assert "exited with status 3; last lines of setup.log" in said, said
    assert f"last words with {REDACTED}" in said, said
    assert TOKEN not in said


def test_a_secret_cut_by_where_the_tail_is_read_from_is_never_shown(tmp_path: Path) -> None:
    secret = "multi\nline-s3cret-" + "x" * 40
    for shift in range(len(secret) + 2):
        # The secret ends `shift` bytes into the window read from the end: its start lies
        # before the window whenever shift < len(secret).
        filler = "y" * (TAIL_BYTES - shift - 1) + "\n"
        (tmp_path / LOG_NAME).write_text("z" * 5000 + "\n" + secret + filler + "end\n")
        tail = log_tail(tmp_path, [secret])
        assert "s3cret" not in tail and "xxxx" not in tail, shift
        assert tail.endswith("end"), shift


def test_a_short_log_is_shown_as_before(tmp_path: Path) -> None:
    (tmp_path / LOG_NAME).write_text("one\ntwo with tok\nthree\n")
    assert log_tail(tmp_path, ["tok"]) == f"one\ntwo with {REDACTED}\nthree"
