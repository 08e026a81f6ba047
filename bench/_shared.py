"""What the benchmarks share: how `poolform` is started, the Terraform peer configuration, and how
a block of figures is written into bench/README.md.

`poolform` is the console script of this interpreter's environment, not the first on PATH: a
version manager's shim (pyenv's is a bash script) adds about 0.1 s to every start, which is not
poolform's time.
"""

from __future__ import annotations

import datetime
import os
import platform
import shutil
import sys
import time
from pathlib import Path


def poolform_argv() -> list[str]:
    beside = Path(sys.executable).parent / "poolform"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("poolform")
    return [found] if found else [sys.executable, "-m", "reconciler.cli.main"]


DEPTH = 5  # dependency chains of this depth, in poolform's and Terraform's configurations
TF_ENV = {"TF_CLI_CONFIG_FILE": "/dev/null", "CHECKPOINT_DISABLE": "1", "TF_IN_AUTOMATION": "1"}


def tf_env() -> dict[str, str]:
    return {**os.environ, **TF_ENV}


def write_terraform_config(directory: Path, resources: int) -> None:
    """`resources` terraform_data resources in chains of DEPTH, each reading the previous."""
    directory.mkdir(parents=True, exist_ok=True)
    parts = ['terraform {\n  required_version = ">= 1.4"\n}\n']
    for chain in range(resources // DEPTH):
        for depth in range(DEPTH):
            value = (
                f'"chain-{chain}"' if depth == 0 else f"terraform_data.r_{chain}_{depth - 1}.output"
            )
            parts.append(
                f'resource "terraform_data" "r_{chain}_{depth}" {{\n  input = {value}\n}}\n'
            )
    (directory / "main.tf").write_text("\n".join(parts), encoding="utf-8")


def write_figures(readme: Path, start: str, end: str, lines: list[str], speed: float) -> None:
    """Replace what lies between the `start` and `end` markers of `readme` with `lines`, headed
    by when, where and how fast this machine was (`speed`: seconds of CPU for 10 million
    Python additions). Nothing is written where the markers are missing."""
    content = readme.read_text(encoding="utf-8")
    if start not in content:
        return
    head, rest = content.split(start, 1)
    _, tail = rest.split(end, 1)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    when = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    load = os.getloadavg()[0]
    block = (
        f"{start}\nMeasured {when} on {machine}, load average {load:.1f}; this machine's "
        f"speed today: 10 million Python additions in {speed:.2f} s of CPU.\n\n"
    )
    readme.write_text(head + block + "\n".join(lines) + "\n" + end + tail, encoding="utf-8")


def calibration() -> float:
    """CPU seconds for 10 million additions in a Python loop: how fast this machine is today
    (about 0.45 s on a quiet modern core)."""
    started, total = time.process_time(), 0
    for i in range(10_000_000):
        total += i
    return time.process_time() - started
