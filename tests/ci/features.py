"""The services the CI flow tests need.

A test that needs PostgreSQL skips locally without a server but fails under CI=true, where
nothing may be skipped silently.
"""

from __future__ import annotations

import os

import pytest

PG_VARIABLE = "POOLFORM_TEST_PG_URL"  # .ci/run starts a PostgreSQL server and sets it
# A test so marked runs with the state on SQLite and again on PostgreSQL (the `backend` fixture).
BOTH_BACKENDS = pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def postgres_url() -> str:
    """The test server's URL; skips locally without the server, fails under CI=true."""
    url = os.environ.get(PG_VARIABLE, "")
    if not url:
        message = f"no PostgreSQL: set {PG_VARIABLE} (.ci/run starts a server and sets it)"
        if in_ci():
            pytest.fail(f"{message} (CI=true: this test must run)")
        pytest.skip(message)
    return url
