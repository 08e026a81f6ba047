"""Bytes that are not UTF-8 where the OS hands them over as they are: a user name in $USER and
$LOGNAME, a configuration directory's name, an ID typed on the command line. The first two are
fine to work with (the lock names them with `\\xff` escapes); an ID that is not text names
nothing and says so (exit 1), never an internal error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

NOT_UTF8 = "\udcff"  # byte 0xff as Python holds it; subprocess passes the byte itself


def test_a_user_name_that_is_not_utf8_applies(pf: Pf, quick: Path) -> None:
    env = {"USER": f"ops{NOT_UTF8}", "LOGNAME": f"ops{NOT_UTF8}"}
    applied = pf("apply", quick, "--auto-approve", env=env)
    assert applied.returncode == 0, applied.stderr
    assert pf("plan", quick, "--detailed-exitcode", env=env).returncode == 0


def test_a_configuration_directory_named_with_a_byte_that_is_not_utf8_applies(
    pf: Pf, quick: Path
) -> None:
    odd = quick.parent / f"capacity{NOT_UTF8}"
    shutil.move(quick, odd)
    applied = pf("apply", odd, "--auto-approve")
    assert applied.returncode == 0, applied.stderr
    assert pf("plan", odd, "--detailed-exitcode").returncode == 0


@pytest.mark.parametrize(
    "command",
    [
        ["import", "worker_pool.cpu-workers", f"wp-{NOT_UTF8}"],
        ["local", "terminate", f"i-{NOT_UTF8}"],
        ["local", "delete-group", f"worker_pool.{NOT_UTF8}"],
        ["local", "resize-group", f"machine_pool.{NOT_UTF8}", "--max", "3"],
        ["jobs", "submit", "jobs/hello.yaml", "--subject", f"team/{NOT_UTF8}"],
        ["jobs", "list", "--pool", NOT_UTF8],
        ["jobs", "cancel", "--pool", NOT_UTF8],
    ],
)
def test_an_id_that_is_not_utf8_names_nothing(pf: Pf, quick: Path, command: list[str]) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    result = pf("--chdir", quick, *command)
    assert result.returncode == 1
    assert "not UTF-8 text" in result.stderr and "internal error" not in result.stderr
    assert pf("plan", quick, "--detailed-exitcode").returncode == 0
