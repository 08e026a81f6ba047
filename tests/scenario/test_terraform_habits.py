"""A Terraform user's habits (issue 12, items 11 and 12): `--chdir`/`-chdir=` on every
command, Terraform's single-dash spellings, durations such as `1m30s`, `destroy --target`,
`-lock=false` refused, and `--lock-timeout` honoured by every command that reads state."""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path

import pytest

from state.sqlite import SqliteStateBackend, default_state_path
from tests.scenario.installed import poolform, poolform_command
from tests.scenario.state_view import recorded_addresses

QUOTA = "resource_pool.team-quota"
ML_PROD = "subject_policy.ml-prod"


def in_directory(cwd: Path, *args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*poolform_command(), *map(str, args)], cwd=cwd, capture_output=True, text=True
    )


@pytest.mark.parametrize("spelling", [["--chdir", "{dir}"], ["-chdir={dir}"], ["--chdir={dir}"]])
def test_chdir_before_the_command_works_as_if_started_there(
    quickstart: Path, tmp_path: Path, spelling: list[str]
) -> None:
    chdir = [s.format(dir=quickstart) for s in spelling]
    planned = in_directory(tmp_path, *chdir, "plan", "-out=relative.plan")
    assert planned.returncode == 0, planned.stderr
    assert (quickstart / "relative.plan").exists()  # relative to DIR, not to the caller
    applied = in_directory(tmp_path, *chdir, "apply", "relative.plan")
    assert applied.returncode == 0, applied.stderr
    assert not (tmp_path / ".poolform").exists()


def test_every_command_takes_chdir(quickstart: Path, tmp_path: Path) -> None:
    where = ["--chdir", str(quickstart)]
    assert in_directory(tmp_path, "apply", "--auto-approve", *where).returncode == 0
    listed = in_directory(tmp_path, "state", "list", *where)
    assert listed.returncode == 0 and QUOTA in listed.stdout.split()
    shown = in_directory(tmp_path, "state", "show", QUOTA, *where)
    assert json.loads(shown.stdout)["address"] == QUOTA
    instances = in_directory(tmp_path, "local", "instances", *where)
    assert instances.returncode == 0 and "p5.48xlarge" in instances.stdout
    for command in (["validate"], ["drift"], ["graph"], ["effective", "training"], ["plan"]):
        result = in_directory(tmp_path, *command, *where)
        assert result.returncode == 0, (command, result.stderr)
    removed = in_directory(tmp_path, "state", "rm", QUOTA, *where)
    assert removed.returncode == 0, removed.stderr
    ids = json.loads(shown.stdout)["provider_ids"]
    imported = in_directory(tmp_path, "import", QUOTA, next(iter(ids.values())), *where)
    assert imported.returncode == 0, imported.stderr
    assert not (tmp_path / ".poolform").exists()


def test_the_old_dir_option_still_works_hidden_and_deprecated(quickstart: Path) -> None:
    assert poolform("apply", quickstart, "--auto-approve").returncode == 0
    listed = poolform("state", "list", "--dir", quickstart)
    assert listed.returncode == 0 and QUOTA in listed.stdout.split()
    assert "--dir is deprecated: use --chdir DIR" in listed.stderr
    for command in (["state", "list"], ["force-unlock"], ["import"], ["local", "instances"]):
        shown = poolform(*command, "--help")
        assert "--chdir DIR" in shown.stdout and "--dir" not in shown.stdout, command


def test_a_missing_chdir_directory_is_an_error(tmp_path: Path) -> None:
    result = poolform("-chdir=" + str(tmp_path / "nowhere"), "plan")
    assert result.returncode == 1
    assert "nowhere" in result.stderr and "Traceback" not in result.stderr


def test_terraform_spellings_on_plan_apply_and_destroy(quickstart: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "p.bin"
    planned = poolform(
        "plan", quickstart, f"-out={plan_file}", "-detailed-exitcode", "-refresh=false",
        f"-target={ML_PROD}", "-lock-timeout=1m30s", "-no-color",
    )  # fmt: skip
    assert planned.returncode == 2, planned.stderr
    assert json.loads(poolform("show", plan_file, "-json").stdout)["options"]["targets"] == [
        ML_PROD
    ]
    applied = poolform("apply", "-auto-approve", "-parallelism=2", "-json", quickstart)
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout.splitlines()[-1])["type"] == "summary"
    replaced = poolform("plan", quickstart, f"-replace={QUOTA}", "-refresh=true", "-json")
    assert json.loads(replaced.stdout)["summary"]["replace"] == 1
    assert poolform("plan", quickstart, "-refresh-only", "-detailed-exitcode").returncode == 0
    destroy_plan = json.loads(poolform("plan", quickstart, "-destroy", "-json").stdout)
    assert destroy_plan["summary"]["destroy"] == 8


@pytest.mark.parametrize("spelling", ["-lock=false", "--lock=false"])
def test_lock_false_is_refused_and_changes_nothing(quickstart: Path, spelling: str) -> None:
    result = poolform("apply", quickstart, "--auto-approve", spelling)
    assert result.returncode == 1
    assert "a command that changes state always takes the state lock" in result.stderr
    assert recorded_addresses(quickstart) == []
    assert poolform("plan", quickstart, "-lock=true").returncode == 0


def test_destroy_target_deletes_the_target_and_what_depends_on_it(quickstart: Path) -> None:
    assert poolform("apply", quickstart, "--auto-approve").returncode == 0
    destroyed = poolform("destroy", quickstart, "--auto-approve", "-target=" + QUOTA)
    assert destroyed.returncode == 0, destroyed.stderr
    assert "3 destroyed" in destroyed.stdout  # the pool and its two policies
    left = recorded_addresses(quickstart)
    assert QUOTA not in left and ML_PROD not in left and len(left) == 5


def test_durations_take_several_units(quickstart: Path) -> None:
    pool = quickstart / "machine-pool.yaml"
    assert "idle_timeout: 10m" in pool.read_text()
    pool.write_text(pool.read_text().replace("idle_timeout: 10m", "idle_timeout: 9m60s"))
    assert poolform("validate", quickstart).returncode == 0
    assert (
        poolform("apply", quickstart, "--auto-approve", "--lock-timeout", "1m30s").returncode == 0
    )
    pool.write_text(pool.read_text().replace("idle_timeout: 9m60s", "idle_timeout: 10m"))
    assert poolform("plan", quickstart, "--detailed-exitcode").returncode == 0  # 9m60s == 10m
    bad = poolform("plan", quickstart, "--lock-timeout", "1m30")
    assert bad.returncode == 1 and "1m30" in bad.stderr


@pytest.mark.parametrize(
    "command",
    [["plan"], ["graph"], ["drift"], ["apply", "--auto-approve"], ["destroy", "--auto-approve"]],
)
def test_every_state_reading_command_waits_for_the_lock(
    quickstart: Path, command: list[str]
) -> None:
    assert poolform("apply", quickstart, "--auto-approve").returncode == 0
    backend = SqliteStateBackend(default_state_path(quickstart))
    held = backend.lock("apply", who="another-run")
    try:
        refused = poolform(*command, quickstart)
        assert refused.returncode == 1 and "locked by another-run" in refused.stderr
        release = threading.Timer(1.0, backend.unlock, args=(held.lock_id,))
        release.start()
        waited = poolform(*command, quickstart, "--lock-timeout", "2m")
        release.join()
        assert waited.returncode == 0, waited.stderr
    finally:
        backend.unlock(held.lock_id)
        backend.close()
