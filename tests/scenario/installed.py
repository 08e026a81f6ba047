"""Running the installed `poolform` command, as a user or CI job does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path


def poolform_command() -> list[str]:
    beside = Path(sys.executable).parent / "poolform"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("poolform")
    return [found] if found else [sys.executable, "-m", "reconciler.cli.main"]


def poolform(
    *args: object, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "CI": "true", "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [*poolform_command(), *map(str, args)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=timeout,
    )


def start(*args: object, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    environment = {**os.environ, "CI": "true", "NO_COLOR": "1", **(env or {})}
    return subprocess.Popen(
        [*poolform_command(), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )
