"""Paths given with `--chdir DIR` are relative to DIR, as in Terraform. `apply plan.bin
--chdir DIR` with plan.bin in the directory poolform was started in said only `plan.bin does
not exist`, which the user could see was false; it now says the path is read from DIR and how
to name the file from there. `show plan.bin` said Python's `[Errno 2] No such file or
directory: 'plan.bin'`, `state push FILE` click's usage and "File 'FILE' does not exist"."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.adversarial.conftest import cloud_holds
from tests.conftest import EXAMPLES, copy_example
from tests.scenario.installed import poolform, poolform_command


def run_in(cwd: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*poolform_command(), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "CI": "true", "NO_COLOR": "1"},
        timeout=120,
    )


def test_a_path_missing_in_chdir_but_present_where_started_says_paths_are_relative_to_dir(
    tmp_path: Path,
) -> None:
    quick = tmp_path / "q"
    copy_example(EXAMPLES / "quickstart", quick, "jobs", "*.md")
    assert run_in(tmp_path, "plan", "q", "-out", "plan.bin").returncode == 0

    for command in ("apply", "show", "graph"):
        refused = run_in(tmp_path, command, "plan.bin", "--chdir", "q")
        assert refused.returncode == 1, refused.stderr
        assert "error: plan.bin does not exist" in refused.stderr, refused.stderr
        assert "paths are relative to --chdir q, as in Terraform" in refused.stderr
        assert "give it as ../plan.bin" in refused.stderr
        assert "Errno" not in refused.stderr
    assert cloud_holds(quick) == 0  # nothing applied

    pulled = run_in(tmp_path, "state", "pull", "--chdir", "q")
    (tmp_path / "pulled.json").write_text(pulled.stdout)
    refused = run_in(tmp_path, "state", "push", "pulled.json", "--chdir", "q")
    assert refused.returncode == 1
    assert refused.stderr.startswith("error: pulled.json does not exist\n"), refused.stderr
    assert "give it as ../pulled.json" in refused.stderr

    # As the hint says, it applies.
    applied = run_in(tmp_path, "apply", "../plan.bin", "--chdir", "q")
    assert applied.returncode == 0, applied.stderr


def test_a_path_missing_everywhere_gets_no_such_hint(tmp_path: Path) -> None:
    (tmp_path / "q").mkdir()
    refused = run_in(tmp_path, "show", "plan.bin", "--chdir", "q")
    assert refused.returncode == 1
    assert refused.stderr == "error: plan.bin does not exist\n"
    assert poolform("show", tmp_path / "nothing.bin").stderr.startswith("error: ")
