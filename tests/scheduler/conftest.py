"""Scheduler tests start real job processes in their own sessions: whatever a test leaves
running (a failed assertion midway) is killed when it ends, by the pids the wrapper wrote."""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def no_stray_jobs(tmp_path: Path) -> Iterator[None]:
    yield
    for pid_file in tmp_path.glob("**/.poolform/jobs/*/attempt-*/claim/pid"):
        if (pid_file.parent.parent / "exit").exists():
            continue
        with contextlib.suppress(ValueError, OSError):
            os.killpg(int(pid_file.read_text().strip()), signal.SIGKILL)
