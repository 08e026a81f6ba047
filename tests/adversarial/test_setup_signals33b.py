"""A local worker's `setup` runs in a process an apply's walk thread starts, and that thread
blocks SIGINT and SIGTERM (so the main thread gets a Ctrl-C: state/threads.py). A blocked
signal stays blocked across fork and exec: every process the setup started had both blocked,
so a setup that stopped what it had started (`server & ...; kill $!`, `timeout 5 cmd`) hung
until its timeout (60 s by default) and the apply failed with `setup on worker ... timed out`.
Now the setup starts with them unblocked, as it would from a shell."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

# Both stop a process with SIGTERM; the mask of the setup's own shell is recorded.
SETUP = """setup: |
  grep SigBlk /proc/self/status > mask.txt
  sleep 3313 & kill $!; wait $!; echo "kill: $?" >> mask.txt
  timeout 0.2 sleep 3314; echo "timeout: $?" >> mask.txt
"""


def test_a_workers_setup_can_stop_what_it_started_with_sigterm(pf: Pf, quick: Path) -> None:
    pool = quick / "worker-pool.yaml"
    text = pool.read_text()
    pool.write_text(text[: text.index("setup: |")] + SETUP)

    done = pf("apply", quick, "--auto-approve", env={"POOLFORM_LOCAL_SETUP_TIMEOUT": "30"})

    assert done.returncode == 0, done.stdout + done.stderr
    masks = sorted((quick / ".poolform").rglob("mask.txt"))
    assert len(masks) == 2  # the pool's two workers
    for mask in masks:
        blocked, kill, timeout = mask.read_text().splitlines()
        assert int(blocked.split()[1], 16) & (1 << 1 | 1 << 14) == 0, blocked  # INT, TERM
        assert (kill, timeout) == ("kill: 143", "timeout: 124")
