"""The adversarial pass drives the installed `poolform` in real subprocesses, as a user (or an
attacker) would: `pf` runs it and returns the finished process."""

from __future__ import annotations

import hashlib
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import copy_example
from tests.scenario.installed import poolform
from tests.scheduler.conftest import kill_stray_jobs

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

Pf = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def pf() -> Pf:
    return poolform


@pytest.fixture(autouse=True)
def no_stray_jobs(tmp_path: Path) -> Iterator[None]:
    """Job processes a failed test leaves running (the scheduler attacks start real ones)."""
    yield
    kill_stray_jobs(tmp_path)


@pytest.fixture
def quick(tmp_path: Path) -> Path:
    """A fresh copy of the quickstart configuration (local provider), not applied."""
    target = tmp_path / "quick"
    return copy_example(EXAMPLES / "quickstart", target)


def tree_digest(directory: Path) -> dict[str, str]:
    """Every file under `directory` (its relative path) and a digest of its bytes: what must
    not change when a command refuses. The empty OS lock files a locked command leaves beside
    the state (state/filelock.py) are not counted."""
    found: dict[str, str] = {}
    for path in sorted(directory.rglob("*")):
        if path.suffix == ".lock" and path.stat().st_size == 0:
            continue
        if path.is_file() and not path.is_symlink():
            found[str(path.relative_to(directory))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def cloud_holds(directory: Path) -> int:
    """How many groups and objects the local cloud beside `directory`'s state holds."""
    import sqlite3

    path = directory / ".poolform" / "local-cloud.db"
    if not path.exists():
        return 0
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return sum(
            db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("groups", "objects")
        )
