"""The merge applies the plan file uploaded by a run of the pull request's last commit, never
another run's artifact that merely has its name: anyone who may push a branch can run a workflow
of their own that uploads an artifact named `poolform-plan-capacity-pr<N>-<commit>` for someone
else's pull request (the commit is public), and the artifact list is newest first."""

from __future__ import annotations

from pathlib import Path

from tests.ci.fake_github import FakeGitHub
from tests.ci.test_scripts import COMMIT, MERGED, ci, github_env, reviewed_on_github

OTHER = "c" * 40


def test_an_artifact_of_the_right_name_from_a_run_of_another_commit_is_not_applied(
    tmp_path: Path, github: FakeGitHub
) -> None:
    number = reviewed_on_github(github)
    name = f"poolform-plan-capacity-pr{number}-{COMMIT}"
    github.upload_artifact(name, {"plan.bin": b"reviewed"}, 1, COMMIT)
    github.upload_artifact(name, {"plan.bin": b"planted"}, 2, OTHER)  # newer, another commit's run
    github.merge(number, MERGED)
    done = ci("fetch-plan", tmp_path, github_env(github, GITHUB_SHA=MERGED))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "plan.bin").read_bytes() == b"reviewed"


def test_only_artifacts_of_other_commits_runs_mean_no_reviewed_plan(
    tmp_path: Path, github: FakeGitHub
) -> None:
    number = reviewed_on_github(github)
    github.upload_artifact(
        f"poolform-plan-capacity-pr{number}-{COMMIT}", {"plan.bin": b"planted"}, 2, OTHER
    )
    github.merge(number, MERGED)
    done = ci("fetch-plan", tmp_path, github_env(github, GITHUB_SHA=MERGED))
    assert done.returncode == 1
    assert "Nothing was applied; re-plan" in done.stderr
    assert not (tmp_path / "plan.bin").exists()
