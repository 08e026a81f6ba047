"""Messages in the user's words (issue 12, item 9): no internal error kinds, the pip command
for a missing extra, `y` is not `yes`, unattended destroy points at a reviewed plan, and the
lock messages name the directory."""

from __future__ import annotations

import os
import pty
import socket
import subprocess
from pathlib import Path

import pytest

from providers.install import install_command
from reconciler.cli.common import missing_extra
from state.sqlite import SqliteStateBackend, default_state_path
from tests.conftest import EXAMPLES, copy_example
from tests.scenario.installed import poolform, poolform_command
from tests.scenario.state_view import recorded_addresses

FAILING_SETUP = """kind: WorkerPool
name: w
pool: {workers: 1}
resources: {instance_type: c5.xlarge}
setup: exit 3
"""


def test_a_failure_reads_as_words_without_internal_kinds(tmp_path: Path) -> None:
    (tmp_path / "workers.yaml").write_text(FAILING_SETUP)
    result = poolform("apply", tmp_path, "--auto-approve")
    assert result.returncode == 1
    failed = next(line for line in result.stderr.splitlines() if "failed: worker_pool.w" in line)
    assert "exited with status 3" in failed
    assert "worker_pool.w: worker_pool.w" not in failed  # the address once
    for kind in ("(permanent)", "(retryable)", "(not_found)", "(conflict)"):
        assert kind not in result.stdout + result.stderr


@pytest.mark.parametrize(("module", "extra"), [("botocore", "aws"), ("google", "gcp")])
def test_a_missing_extra_names_the_pip_command(tmp_path: Path, module: str, extra: str) -> None:
    shadow = tmp_path / "shadow" / module
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text(
        f"raise ModuleNotFoundError({'No module named ' + module!r}, name={module!r})\n"
    )
    configuration = tmp_path / "config"
    copy_example(EXAMPLES / f"anyscale-{extra}", configuration, "*.md")
    # (apply: a plan from an empty state calls no cloud, so it needs no SDK)
    result = poolform(
        "apply", configuration, "--auto-approve", env={"PYTHONPATH": str(tmp_path / "shadow")}
    )
    assert result.returncode == 1
    assert f"run `{install_command(extra)}`" in result.stderr
    assert "internal error" not in result.stderr and "(permanent)" not in result.stderr


def test_a_missing_driver_anywhere_names_its_extra() -> None:
    error = ModuleNotFoundError("No module named 'psycopg'", name="psycopg")
    assert missing_extra(error) == f"psycopg is not installed: run `{install_command('postgres')}`"
    assert missing_extra(ModuleNotFoundError("x", name="yaml")) is None


def answer_on_a_terminal(args: list[object], answer: str) -> subprocess.CompletedProcess[str]:
    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            [*poolform_command(), *map(str, args)],
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "NO_COLOR": "1", "CI": ""},
        )
        os.write(controller, f"{answer}\n".encode())
        out, err = process.communicate(timeout=60)
    finally:
        os.close(terminal)
        os.close(controller)
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def test_y_is_not_yes(quickstart: Path) -> None:
    result = answer_on_a_terminal(["apply", quickstart], "y")
    assert result.returncode == 1
    assert "Apply cancelled." in result.stderr
    assert "Only 'yes' is accepted" in result.stderr
    assert "error" not in result.stderr
    assert recorded_addresses(quickstart) == []


def test_destroy_without_a_terminal_points_at_a_reviewed_destroy_plan(
    quickstart: Path, tmp_path: Path
) -> None:
    assert poolform("apply", quickstart, "--auto-approve").returncode == 0
    refused = poolform("destroy", quickstart)
    assert refused.returncode == 1
    assert "poolform plan --destroy -out FILE" in refused.stderr
    assert "poolform apply FILE" in refused.stderr
    # ...and that way works.
    plan_file = tmp_path / "destroy.plan"
    assert poolform("plan", quickstart, "--destroy", "-out", plan_file).returncode == 0
    applied = poolform("apply", plan_file)
    assert applied.returncode == 0, applied.stderr
    assert "Destroy complete! Resources: 8 destroyed." in applied.stdout
    assert recorded_addresses(quickstart) == []


def test_a_held_lock_names_its_directory_and_force_unlock_refuses_a_live_holder(
    quickstart: Path,
) -> None:
    assert poolform("apply", quickstart, "--auto-approve").returncode == 0
    backend = SqliteStateBackend(default_state_path(quickstart))
    try:
        held = backend.lock("apply", who="someone@elsewhere")
        blocked = poolform("plan", quickstart)
        assert blocked.returncode == 1
        assert "the state is locked by someone@elsewhere" in blocked.stderr
        # Its hint is what works on SQLite: the lock goes with its holder.
        assert "the lock frees itself when that process ends" in blocked.stderr
        assert "force-unlock" not in blocked.stderr
        # A local lock frees itself when its holder ends: a live holder is not unlocked by force.
        refused = poolform("force-unlock", held.lock_id, "--chdir", quickstart)
        assert refused.returncode == 1
        assert refused.stderr == (
            f"error: the state lock {held.lock_id} is held by a running process (pid "
            f"{os.getpid()} on {socket.gethostname()}); a local lock frees itself when its "
            "holder ends: stop that process instead\n"
        )
    finally:
        backend.close()
    assert poolform("plan", quickstart).returncode == 0  # the lock is gone
