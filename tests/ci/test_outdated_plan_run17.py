"""A plan job of an older commit that runs after the newer commit's (re-run by hand from the
Actions or pipeline page, or a slow run finishing late) must not put its plan back in the pull
request's comment: the merge applies the plan of the last commit, so the comment reviewers
approve must be that one."""

from __future__ import annotations

from pathlib import Path

from tests.ci.fake_github import FakeGitHub
from tests.ci.fake_gitlab import FakeGitLab
from tests.ci.test_scripts import ci, github_env, gitlab_env, planned

OLD = "a" * 40
NEW = "b" * 40


def test_github_an_older_commits_plan_run_leaves_the_newer_plan_in_the_comment(
    tmp_path: Path, github: FakeGitHub
) -> None:
    number = github.open_thread("change", pull=True, head=NEW)
    newer = github_env(github, POOLFORM_PR=str(number), POOLFORM_COMMIT=NEW)
    posted = ci("plan-comment", planned(tmp_path, "### poolform plan: 0 to destroy\n"), newer)
    assert posted.returncode == 0, posted.stderr

    older = github_env(github, POOLFORM_PR=str(number), POOLFORM_COMMIT=OLD)
    late = ci("plan-comment", planned(tmp_path, "### poolform plan: 5 to destroy\n"), older)
    assert late.returncode == 0, late.stderr
    assert "outdated" in late.stderr
    (comment,) = [c for c in github.threads[number].comments if "poolform-ci: plan" in c.body]
    assert "0 to destroy" in comment.body and "5 to destroy" not in comment.body


def test_gitlab_an_older_commits_plan_run_leaves_the_newer_plan_in_the_note(
    tmp_path: Path, gitlab: FakeGitLab
) -> None:
    iid = gitlab.open_merge_request(OLD)
    gitlab.push(iid, NEW)
    newer = gitlab_env(gitlab, CI_MERGE_REQUEST_IID=str(iid), CI_COMMIT_SHA=NEW)
    posted = ci("plan-comment", planned(tmp_path, "### poolform plan: 0 to destroy\n"), newer)
    assert posted.returncode == 0, posted.stderr

    older = gitlab_env(gitlab, CI_MERGE_REQUEST_IID=str(iid), CI_COMMIT_SHA=OLD)
    late = ci("plan-comment", planned(tmp_path, "### poolform plan: 5 to destroy\n"), older)
    assert late.returncode == 0, late.stderr
    (note,) = [n for n in gitlab.merge_requests[iid].notes if "poolform-ci: plan" in n.body]
    assert "0 to destroy" in note.body and "5 to destroy" not in note.body
