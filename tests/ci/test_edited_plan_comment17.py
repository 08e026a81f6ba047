"""The plan comment is what reviewers approve, and on GitHub anyone with write access to the
repository may edit any comment, the workflow's own included: the pull request's author can
post a change that destroys capacity, let the workflow comment "1 to destroy", then edit that
comment to read "0 to destroy" before the review (or delete it and post a look-alike). The merge
then applied the saved plan (the real one) under an approval of another text. Now the merge
applies nothing when the workflow's plan comment is gone or was last edited by anyone but the
workflow, and says so on the pull request."""

from __future__ import annotations

import pytest

from tests.ci.fake_github import FakeGitHub
from tests.ci.flows import CONFIG, GitHubFlow
from tests.ci.team import Team, resource_pool

PLAN_MARKER = f"<!-- poolform-ci: plan {CONFIG} -->"
APPLY_MARKER = f"<!-- poolform-ci: apply {CONFIG} -->"


@pytest.fixture
def flow(team: Team, github: FakeGitHub) -> GitHubFlow:
    team.apply_by_hand()
    return GitHubFlow(team, github)


def test_a_plan_comment_edited_by_someone_else_is_not_applied(
    flow: GitHubFlow, team: Team, github: FakeGitHub
) -> None:
    change, planned = flow.open("shrink", {f"{CONFIG}/gpus.yaml": None})  # deletes the pool
    assert planned.conclusion == "success", planned.output
    (comment,) = flow.thread(change).comments
    assert "1 to destroy" in comment.body
    github.human_edit(
        change.number, PLAN_MARKER, comment.body.replace("1 to destroy", "0 to destroy")
    )
    before = team.state()

    merged = flow.merge(change)
    assert merged.conclusion == "failure"
    assert merged.step("Apply the reviewed plan").conclusion == "skipped"
    assert team.state() == before, "nothing applied"
    assert "edited by octocat" in merged.output
    (note,) = [c.body for c in flow.thread(change).comments if c.body.startswith(APPLY_MARKER)]
    assert "edited by octocat" in note and "Nothing was applied" in note


def test_a_deleted_plan_comment_with_a_look_alike_in_its_place_is_not_applied(
    flow: GitHubFlow, team: Team, github: FakeGitHub
) -> None:
    change, planned = flow.open("shrink", {f"{CONFIG}/gpus.yaml": None})
    assert planned.conclusion == "success", planned.output
    thread = flow.thread(change)
    (comment,) = thread.comments
    thread.comments.remove(comment)  # deleted by someone with write access
    github.human_comment(change.number, comment.body.replace("1 to destroy", "0 to destroy"))
    before = team.state()

    merged = flow.merge(change)
    assert merged.conclusion == "failure"
    assert team.state() == before, "nothing applied"
    assert "no plan comment of this workflow" in merged.output


def test_a_plan_comment_left_at_an_older_commit_is_not_applied(
    flow: GitHubFlow, team: Team, github: FakeGitHub
) -> None:
    change, planned = flow.open("grow", {f"{CONFIG}/gpus.yaml": resource_pool("gpus", 24)})
    assert planned.conclusion == "success", planned.output
    github.outages["PATCH"] = [502, 502, 502]  # the push's plan is saved, its comment is not
    pushed = flow.push(change, {f"{CONFIG}/gpus.yaml": None})
    assert pushed.step("Keep the plan file for the merge").conclusion == "success"
    assert pushed.step("Comment on the pull request").conclusion == "failure"
    (comment,) = flow.thread(change).comments
    assert change.head not in comment.body  # still the first commit's plan
    before = team.state()

    merged = flow.merge(change)
    assert merged.conclusion == "failure"
    assert team.state() == before, "the last commit's plan, never shown, is not applied"
    assert "not of its last commit" in merged.output


def test_a_plan_comment_the_workflow_edited_itself_is_applied(flow: GitHubFlow, team: Team) -> None:
    change, planned = flow.open("grow", {f"{CONFIG}/gpus.yaml": resource_pool("gpus", 24)})
    pushed = flow.push(change, {f"{CONFIG}/gpus.yaml": resource_pool("gpus", 32)})
    assert planned.conclusion == pushed.conclusion == "success", planned.output + pushed.output
    assert flow.thread(change).comments[0].edits == 1
    merged = flow.merge(change)
    assert merged.conclusion == "success", merged.output
    assert team.records()["resource_pool.gpus"]["capacity"]["gpu"] == 32


def test_a_merge_whose_last_plan_failed_says_there_is_no_saved_plan(
    flow: GitHubFlow, team: Team
) -> None:
    broken = resource_pool("gpus", 16).replace("capacity:", "capacty:")
    change, failed = flow.open("typo", {f"{CONFIG}/gpus.yaml": broken})
    assert failed.conclusion == "failure"
    merged = flow.merge(change)
    assert merged.conclusion == "failure"
    assert "No saved plan of pull request" in merged.output
