"""What the benchmarks share: how `poolform` is started, and the Terraform peer configuration.

`poolform` is the console script of this interpreter's environment, not the first on PATH: a
version manager's shim (pyenv's is a bash script) adds about 0.1 s to every start, which is not
poolform's time.
"""

from __future__ import annotations

import os
import shutil
import sys
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
