"""Shared fixtures: run the CLI in-process like a user would, from any directory."""

from __future__ import annotations

import shutil
import signal
from dataclasses import dataclass
from pathlib import Path

import pytest

from reconciler.cli.main import main

# A suite started in the background of a non-interactive shell (`pytest ... &` in a script, a
# CI runner's background step) inherits SIGINT ignored, as POSIX has such a shell start its
# asynchronous commands, and so would every poolform and job the tests start: each Ctrl-C
# test then failed (14 of them, found so). Put back as an interactive shell would have it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def copy_example(source: Path, target: Path, *skip: str) -> Path:
    """An example configuration copied to `target` as the repository has it, without the files
    named by the `skip` patterns. Never its `.poolform/`: the README's first command applies
    examples/quickstart in place (as the examples' READMEs do zenml), and a copy holding that
    state would be an applied configuration, failing tests for whoever follows the README."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns(".poolform", *skip))
    return target


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]):
    """Call `poolform ARGS...` through main(argv); returns exit code, stdout and stderr."""

    def _run(*args: str) -> Result:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return _run


@pytest.fixture
def write(tmp_path: Path):
    """Write {name: text} into a fresh configuration directory and return it."""

    def _write(files: dict[str, str | bytes]) -> Path:
        for name, content in files.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content)
        return tmp_path

    return _write


@pytest.fixture
def quickstart(tmp_path: Path) -> Path:
    """A private copy of examples/quickstart (configuration only)."""
    target = tmp_path / "quickstart"
    return copy_example(EXAMPLES / "quickstart", target, "jobs", "*.md")
