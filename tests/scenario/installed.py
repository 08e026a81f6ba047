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


def poolform_within_memory(
    limit_bytes: int, *args: object, env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """`poolform ARGS...` with its address space capped at `limit_bytes` (`ulimit -v`, a CI
    container's limit): a run that reads a large file whole cannot fit in it. Only `env` is
    its environment (with CI and NO_COLOR set)."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    return subprocess.run(
        [*poolform_command(), *map(str, args)],
        capture_output=True,
        text=True,
        env={"CI": "true", "NO_COLOR": "1", **env},
        preexec_fn=limit,
        timeout=timeout,
    )
