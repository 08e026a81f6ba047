"""What left a newcomer stuck. Jobs submitted with no scheduler running stay queued, and the
reason they read said `submitted; the scheduler's next cycle will place it`, as if some
scheduler were about to. Someone who knows Kueue or SkyPilot expects a controller that is always
there; here one runs only when `poolform scheduler run` is started, and the reason says so.
And Terraform's `init`, `refresh` and `taint` were unknown commands, with no word of what to do
instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file, listed
from tests.scenario.installed import poolform
from tests.scheduler.scenario import ok


def test_a_job_no_cycle_has_seen_names_the_command_that_runs_the_scheduler(
    tmp_path: Path,
) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo\n")
    ok("jobs", "submit", job, "--chdir", directory)

    (found,) = listed(directory)
    assert found["status"] == "queued"
    assert found["reason"]["code"] == "pending_evaluation"
    assert "no scheduler cycle has run since" in found["reason"]["message"]
    assert "`poolform scheduler run`" in found["reason"]["message"]
    assert "`poolform scheduler run`" in ok("jobs", "list", "--chdir", directory)


@pytest.mark.parametrize(
    ("command", "instead"),
    [
        ("init", "run `poolform plan`"),
        ("refresh", "`poolform apply --refresh-only`"),
        ("taint", "`poolform plan --replace ADDR`"),
    ],
)
def test_a_terraform_command_poolform_has_no_need_of_says_what_to_do_instead(
    command: str, instead: str
) -> None:
    """A Terraform user's first reflex, `init`, got click's `No such command 'init'`."""
    result = poolform(command)
    assert result.returncode == 1
    assert f"Error: poolform has no {command}: " in result.stderr
    assert instead in result.stderr
    assert "No such command" not in result.stderr
    # A mistyped command keeps click's suggestion.
    assert "Did you mean 'plan'?" in poolform("plna").stderr


def test_applying_a_saved_plan_with_nothing_to_do_says_so(pf: Pf, quick: Path) -> None:
    """It printed the plan's header line and nothing more, exit 0: no word of how it ended
    (a directory's apply says `No changes.`; Terraform says `Apply complete!`)."""
    assert pf("apply", quick, "--auto-approve").returncode == 0
    plan_file = quick.parent / "nothing.bin"
    assert pf("plan", quick, "-out", plan_file).returncode == 0
    applied = pf("apply", plan_file)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout.splitlines()[-1] == "No changes: the saved plan has nothing to apply."


def test_a_job_submitted_before_its_configuration_was_applied_is_told_to_apply_it(
    tmp_path: Path, quick: Path
) -> None:
    """From a directory that is no configuration, with a job file inside one not applied yet,
    it said `<cwd> holds no poolform configuration`: as if the configuration did not exist."""
    import os
    import subprocess

    from tests.adversarial.conftest import tree_digest
    from tests.scenario.installed import poolform_command

    before = tree_digest(tmp_path)
    result = subprocess.run(
        [*poolform_command(), "jobs", "submit", "quick/jobs/hello.yaml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
    )
    assert result.returncode == 1
    assert result.stderr.startswith(
        "error: no applied configuration for quick/jobs/hello.yaml: no .poolform/ in its "
        f"directory or above, nor in {tmp_path.resolve()} or above\n"
    )
    assert "apply the configuration the job is for first (`poolform apply DIR`)" in result.stderr
    assert "holds no poolform configuration" not in result.stderr
    assert tree_digest(tmp_path) == before  # nothing made
