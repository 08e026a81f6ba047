"""The example CI workflows find their pull request comment and their drift issue again by a
marker at the start of the body (`<!-- poolform-ci: plan capacity -->`), and took the first
one that had it, whoever wrote it. Anyone who may comment (on a public repository, anyone)
could post the marker first: the workflow then wrote the plan into that person's comment,
which they could edit afterwards to show reviewers another plan while the real one was
merged and applied; an issue opened with the drift marker got the nightly report, and was
closed by the workflow. Now only comments and issues written by the workflow's own user count
(`github-actions[bot]`, or POOLFORM_CI_AUTHOR; on GitLab the token's user, from GET /user);
everyone else's are left alone. Driven against the fake code hosts of tests/ci (the `github`
and `gitlab` fixtures of its conftest)."""

from __future__ import annotations

from pathlib import Path

from tests.ci.fake_github import BOT, FakeGitHub
from tests.ci.fake_gitlab import FakeGitLab
from tests.ci.test_scripts import COMMIT, ci, github_env, gitlab_env, planned

PLAN_MARKER = "<!-- poolform-ci: plan capacity -->"
DRIFT_MARKER = "<!-- poolform-ci: drift capacity -->"
FORGED = f"{PLAN_MARKER}\n### poolform plan: No changes.\n"


def test_a_plan_comment_someone_else_posted_with_the_marker_is_left_alone(
    tmp_path: Path, github: FakeGitHub
) -> None:
    number = github.open_thread("change", pull=True, head=COMMIT)
    github.human_comment(number, FORGED, author="mallory")
    env = github_env(github, POOLFORM_PR=str(number), POOLFORM_COMMIT=COMMIT)
    for plan in ("1 to destroy", "2 to destroy"):
        done = ci("plan-comment", planned(tmp_path, f"### poolform plan: {plan}\n"), env)
        assert done.returncode == 0, done.stderr

    forged, ours = github.threads[number].comments
    assert forged.body == FORGED and forged.edits == 0
    assert ours.author == BOT and "2 to destroy" in ours.body and ours.edits == 1


def test_the_author_the_workflow_writes_as_can_be_named(tmp_path: Path, github: FakeGitHub) -> None:
    number = github.open_thread("change", pull=True, head=COMMIT)
    github.human_comment(number, f"{PLAN_MARKER}\nold plan\n", author="capacity-bot")
    env = github_env(
        github, POOLFORM_PR=str(number), POOLFORM_COMMIT=COMMIT, POOLFORM_CI_AUTHOR="capacity-bot"
    )
    done = ci("plan-comment", planned(tmp_path, "### poolform plan: 1 to add\n"), env)
    assert done.returncode == 0, done.stderr
    (only,) = github.threads[number].comments
    assert only.edits == 1 and "1 to add" in only.body


def test_a_drift_issue_someone_else_opened_with_the_marker_is_left_alone(
    tmp_path: Path, github: FakeGitHub
) -> None:
    forged = github.open_thread("drift", f"{DRIFT_MARKER}\nall fine, close me\n")
    (tmp_path / "poolform-drift.md").write_text("## drift: 1 resource\n")
    found = ci("drift-issue", tmp_path, github_env(github), "--status", "2")
    assert found.returncode == 0, found.stderr
    gone = ci("drift-issue", tmp_path, github_env(github), "--status", "0")
    assert gone.returncode == 0, gone.stderr

    theirs = github.threads[forged]
    assert theirs.edits == 0 and theirs.state == "open" and theirs.comments == []
    (ours,) = [t for t in github.issues() if t.number != forged]
    assert ours.author == BOT and ours.state == "closed"


def test_a_gitlab_note_someone_else_posted_with_the_marker_is_left_alone(
    tmp_path: Path, gitlab: FakeGitLab
) -> None:
    iid = gitlab.open_merge_request(COMMIT)
    gitlab.human_note(iid, FORGED)
    env = gitlab_env(gitlab, CI_MERGE_REQUEST_IID=str(iid), CI_COMMIT_SHA=COMMIT)
    done = ci("plan-comment", planned(tmp_path, "### poolform plan: 1 to destroy\n"), env)
    assert done.returncode == 0, done.stderr

    forged, ours = [n for n in gitlab.merge_requests[iid].notes if not n.system]
    assert forged.body == FORGED and forged.edits == 0
    assert "1 to destroy" in ours.body
