"""Helpers for scheduler scenarios run through the installed `poolform`, with real processes.

Nothing here waits for a fixed time: `wait_until` polls a condition up to a generous deadline.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema

from tests.scenario.installed import poolform, start

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCHEMA = json.loads((ROOT / "reconciler" / "scheduler" / "jobs.schema.json").read_text())


def ok(*args: object) -> str:
    result = poolform(*args)
    assert result.returncode == 0, f"poolform {args}: {result.stdout}{result.stderr}"
    return result.stdout


def as_json(*args: object) -> Any:
    data = json.loads(ok(*args, "--json"))
    jsonschema.validate(data, SCHEMA)  # every --json output follows the documented contract
    return data


def jobs(directory: Path) -> dict[int, dict[str, Any]]:
    return {job["id"]: job for job in as_json("jobs", "list", "--chdir", directory)["jobs"]}


def wait_until(what: str, condition: Callable[[], bool], deadline: float = 60.0) -> None:
    end = time.monotonic() + deadline
    while not condition():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.05)


def attempt_ended(attempt: Path) -> bool:
    """Whether an attempt has ended: its wrapper recorded a status and has exited (gone, or a
    zombie not reaped yet). The status is written before the wrapper ends the rest of its
    session, so the exit file alone is not the end a scheduler records."""
    if not (attempt / "exit").exists():
        return False
    pid = int((attempt / "claim" / "pid").read_text())
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def cycle_until(directory: Path, what: str, condition: Callable[[], bool]) -> None:
    """Run `scheduler run --once` until the condition holds (each run is one whole cycle)."""

    def step() -> bool:
        ok("scheduler", "run", "--once", "--grace", "5s", "--chdir", directory)
        return condition()

    wait_until(what, step)


def applied_copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("jobs", "*.md", ".poolform"))
    ok("apply", target, "--auto-approve")
    return target


def scheduler_loop(directory: Path) -> subprocess.Popen[str]:
    return start("scheduler", "run", "--interval", "0.05", "--grace", "5s", "--chdir", directory)


def statuses(directory: Path) -> dict[int, str]:
    """Job statuses read straight from the store (cheap enough to poll; what the CLI shows
    is checked with `jobs` and `as_json`)."""
    path = directory / ".poolform" / "scheduler.db"
    with sqlite3.connect(path, timeout=30) as db:
        return dict(db.execute("SELECT id, status FROM jobs ORDER BY id").fetchall())


TERMINAL = {"succeeded", "failed", "cancelled", "rejected"}
