"""What the poolform under test can do, found out at run time, and the services a test needs.

The CI flows use features that are built on other branches (issue 14 item 2, issue 13): a test
that needs one skips with the feature's name until it is there. A test that needs PostgreSQL
skips locally without a server but fails under CI=true, where nothing may be skipped silently.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

PG_VARIABLE = "POOLFORM_TEST_PG_URL"  # .ci/run starts a PostgreSQL server and sets it
# A test so marked runs with the state on SQLite and again on PostgreSQL (the `backend` fixture).
BOTH_BACKENDS = pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)


def poolform_command() -> list[str]:
    beside = Path(sys.executable).parent / "poolform"
    return [str(beside)] if beside.exists() else [sys.executable, "-m", "reconciler.cli.main"]


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*poolform_command(), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
        check=False,
    )


@functools.cache
def missing_review_features() -> tuple[str, ...]:
    """The `plan` options the pull request flow passes that this poolform lacks."""
    shown = _run("plan", "--help").stdout
    return tuple(f"`plan {flag}`" for flag in ("--commit", "--label") if flag not in shown)


@functools.cache
def postgres_backend_missing() -> bool:
    """True when this poolform has no PostgreSQL state backend (tried on a dead address)."""
    with tempfile.TemporaryDirectory() as directory:
        Path(directory, "cluster.yaml").write_text(
            "kind: Cluster\nname: probe\nstate: {backend: postgres, "
            "dsn: 'postgresql://probe@127.0.0.1:9/none?connect_timeout=1'}\n"
        )
        done = _run("plan", cwd=Path(directory))
    return "state backend is not available in this version" in done.stderr


def require_review_features() -> None:
    missing = missing_review_features()
    if missing:
        pytest.skip(
            f"this poolform lacks {' and '.join(missing)} (issue 14 item 2, built on the cli "
            "branch): the pull request flow passes them"
        )


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def postgres_url() -> str:
    """The test server's URL; skips without the backend feature or (locally) the server."""
    if postgres_backend_missing():
        pytest.skip(
            "this poolform has no PostgreSQL state backend (issue 13, built on the state "
            "branch): `state: {backend: postgres}` is not available in this version"
        )
    url = os.environ.get(PG_VARIABLE, "")
    if not url:
        message = f"no PostgreSQL: set {PG_VARIABLE} (.ci/run starts a server and sets it)"
        if in_ci():
            pytest.fail(f"{message} (CI=true: this test must run)")
        pytest.skip(message)
    return url
