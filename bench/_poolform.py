"""How the benchmarks start `poolform`: the console script of this interpreter's environment.

Not the first `poolform` on PATH: a version manager's shim (pyenv's is a bash script) adds
about 0.1 s to every start, which is not poolform's time.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def poolform_argv() -> list[str]:
    beside = Path(sys.executable).parent / "poolform"
    if beside.exists():
        return [str(beside)]
    found = shutil.which("poolform")
    return [found] if found else [sys.executable, "-m", "reconciler.cli.main"]
