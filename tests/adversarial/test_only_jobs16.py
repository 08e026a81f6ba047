"""A configuration directory left with only a Job file (the capacity files moved into a
subfolder, or deleted, and the job kept): jobs are not planned, so the plan deleted every
recorded resource (8 to destroy, exit 0; `apply --auto-approve` would have done it), where an
emptied directory is refused. It is refused now, naming the jobs; destroy still deletes."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf, cloud_holds

JOB = "kind: Job\nname: j\npool: team-quota\nrun: echo hi\n"


def test_a_directory_left_with_only_jobs_plans_no_deletion(pf: Pf, quick: Path) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    held = cloud_holds(quick)
    (quick / "old").mkdir()
    for path in quick.glob("*.yaml"):
        path.rename(quick / "old" / path.name)
    (quick / "job.yaml").write_text(JOB)

    for command in (["plan"], ["apply", "--auto-approve"]):
        refused = pf(*command, quick)
        assert refused.returncode == 1, refused.stdout
        assert (
            f"error: {quick} declares nothing (only jobs, which plans leave to `jobs submit`), "
            "but its state records 8 resource(s): refusing to plan their deletion"
        ) in refused.stderr
    assert cloud_holds(quick) == held

    assert pf("destroy", quick, "--auto-approve").returncode == 0
    assert cloud_holds(quick) < held


def test_a_directory_of_jobs_alone_is_not_a_configuration(pf: Pf, tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    refused = pf("plan", tmp_path)
    assert refused.returncode == 1
    assert "declares nothing to plan (only jobs" in refused.stderr
