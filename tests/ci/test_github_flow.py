"""The GitHub Actions workflows of examples/ci/github-actions/, run step by step through a pull
request's life against a fake GitHub API, on the local provider with the state on SQLite (a disk
the runners share) and on PostgreSQL (nothing shared but the backend)."""

from __future__ import annotations

import pytest

from tests.ci.fake_github import FakeGitHub
from tests.ci.features import BOTH_BACKENDS
from tests.ci.flows import CONFIG, GitHubFlow
from tests.ci.team import Team, applied_exactly, machine_pool, resource_pool

POOLFORM_MARKER = "<!-- poolform-plan:"  # poolform's own, in the plan's Markdown


def marked(flow: str, directory: str) -> str:
    """The marker the scripts find their comment or issue by."""
    return f"<!-- poolform-ci: {flow} {directory} -->"


@pytest.fixture
def flow(team: Team, github: FakeGitHub) -> GitHubFlow:
    team.apply_by_hand()  # the capacity main declares exists before the first pull request
    return GitHubFlow(team, github)


@BOTH_BACKENDS
def test_a_pull_request_is_planned_on_every_push_in_one_comment_and_the_merge_applies_that_plan(
    flow: GitHubFlow, team: Team
) -> None:
    change, opened = flow.open(
        "grow",
        {
            f"{CONFIG}/machine-pool.yaml": machine_pool(cpu=4),
            f"{CONFIG}/cpus.yaml": resource_pool("cpus", 0),
        },
    )
    assert opened.conclusion == "success", opened.output
    comments = flow.thread(change).comments
    assert len(comments) == 1
    first = comments[0].body
    assert first.startswith(marked("plan", CONFIG))
    assert POOLFORM_MARKER in first
    assert "1 to add, 1 to change, 0 to replace, 0 to destroy" in first
    assert change.head[:12] in first
    assert flow.artifact(f"poolform-plan-{CONFIG}-pr{change.number}-{change.head}")

    pushed = flow.push(change, {f"{CONFIG}/gpus.yaml": resource_pool("gpus", 32)})
    assert pushed.conclusion == "success", pushed.output
    comments = flow.thread(change).comments
    assert len(comments) == 1, "the second push edits the comment, never adds one"
    assert comments[0].edits == 1
    second = comments[0].body
    assert "1 to add, 2 to change" in second and change.head[:12] in second
    reviewed = flow.artifact(f"poolform-plan-{CONFIG}-pr{change.number}-{change.head}")

    before = team.records()
    merged = flow.merge(change)
    assert merged.conclusion == "success", merged.output
    assert f"plan reviewed on pull request #{change.number}" in merged.output
    assert "Apply complete! Resources: 1 added, 2 changed" in merged.output
    assert team.records() == applied_exactly(before, team.reviewed_changes(reviewed))
    notes = [c for c in flow.thread(change).comments if marked("apply", CONFIG) in c.body]
    assert len(notes) == 1 and "Applied the reviewed plan" in notes[0].body
    assert team.poolform("plan", "--detailed-exitcode").returncode == 0


@BOTH_BACKENDS
def test_a_plan_made_stale_by_another_merge_is_refused_applies_nothing_and_says_so(
    flow: GitHubFlow, team: Team
) -> None:
    first, planned = flow.open("batch", {f"{CONFIG}/machine-pool.yaml": machine_pool(batch=3)})
    second, also = flow.open("gpus", {f"{CONFIG}/gpus.yaml": resource_pool("gpus", 24)})
    assert planned.conclusion == also.conclusion == "success", planned.output + also.output
    assert flow.merge(first).conclusion == "success"
    after_first = team.state()

    refused = flow.merge(second)
    assert refused.conclusion == "failure"
    assert refused.step("Apply the reviewed plan").code == 1
    assert "re-plan" in refused.output
    assert team.state() == after_first, "a stale plan applies nothing"
    notes = [c.body for c in flow.thread(second).comments if marked("apply", CONFIG) in c.body]
    assert len(notes) == 1
    assert "did not apply" in notes[0] and "re-plan" in notes[0]
    assert len([c for c in flow.thread(second).comments if marked("plan", CONFIG) in c.body]) == 1


def test_a_plan_made_stale_by_a_change_of_state_is_refused(flow: GitHubFlow, team: Team) -> None:
    change, planned = flow.open("batch", {f"{CONFIG}/machine-pool.yaml": machine_pool(batch=3)})
    assert planned.conclusion == "success", planned.output
    # Someone accepts a hand-made change into state before the merge: the serial moves.
    moved = team.poolform(
        "local", "resize-group", "machine_pool.shared.machine_type.cpu", "--max", "5"
    )
    assert moved.returncode == 0, moved.stderr
    accepted = team.poolform("apply", "--refresh-only", "--auto-approve")
    assert accepted.returncode == 0, accepted.stderr
    before = team.state()

    refused = flow.merge(change)
    assert refused.conclusion == "failure"
    assert "re-plan" in refused.output
    assert team.state() == before
    notes = [c.body for c in flow.thread(change).comments if marked("apply", CONFIG) in c.body]
    assert len(notes) == 1 and "did not apply" in notes[0]


def test_a_failing_plan_posts_its_error_as_the_comment_and_the_next_push_replaces_it(
    flow: GitHubFlow, team: Team
) -> None:
    broken = resource_pool("gpus", 16).replace("capacity:", "capacty:")
    change, failed = flow.open("typo", {f"{CONFIG}/gpus.yaml": broken})
    assert failed.conclusion == "failure"
    assert failed.step("Plan").code == 1
    assert failed.step("Keep the plan file for the merge").conclusion == "skipped"
    assert failed.step("Comment on the pull request").conclusion == "success"
    assert not [a for a in flow.github.artifacts if a.name.endswith(change.head)]
    (comment,) = flow.thread(change).comments
    assert "poolform plan failed" in comment.body
    assert "gpus.yaml" in comment.body and "capacty" in comment.body

    fixed = flow.push(change, {f"{CONFIG}/gpus.yaml": resource_pool("gpus", 20)})
    assert fixed.conclusion == "success", fixed.output
    (comment,) = flow.thread(change).comments
    assert "poolform plan failed" not in comment.body
    assert "0 to add, 1 to change" in comment.body


def test_a_push_to_main_without_a_reviewed_plan_applies_nothing(
    flow: GitHubFlow, team: Team
) -> None:
    before = team.state()
    pushed = flow.push_to_main({f"{CONFIG}/gpus.yaml": resource_pool("gpus", 64)})
    assert pushed.conclusion == "failure"
    assert pushed.step("Fetch the reviewed plan").code == 1
    assert pushed.step("Apply the reviewed plan").conclusion == "skipped"
    assert "no single merged pull request" in pushed.output and "re-plan" in pushed.output
    assert team.state() == before


@BOTH_BACKENDS
def test_drift_on_three_nights_is_one_issue_updated_twice_and_closed_when_gone(
    flow: GitHubFlow, team: Team
) -> None:
    # Someone else's issues and pull requests, more than one page of them.
    for number in range(120):
        flow.github.open_thread(f"unrelated {number}", "text", pull=number % 3 == 0)
    quiet = flow.night()
    assert quiet.conclusion == "success", quiet.output
    assert not [i for i in flow.github.issues() if marked("drift", CONFIG) in i.body]

    changed = team.poolform(
        "local", "resize-group", "machine_pool.shared.machine_type.cpu", "--max", "5"
    )
    assert changed.returncode == 0, changed.stderr
    for night in range(3):
        if night == 2:  # the drift grows on the third night
            template = team.poolform(
                "local",
                "change-template",
                "machine_pool.shared.machine_type.batch",
                "--instance-type",
                "m5.2xlarge",
            )
            assert template.returncode == 0, template.stderr
        ran = flow.night()
        assert ran.conclusion == "success", ran.output
        drift_issues = [i for i in flow.github.issues() if marked("drift", CONFIG) in i.body]
        assert len(drift_issues) == 1
    (issue,) = drift_issues
    assert issue.state == "open" and issue.edits == 2
    assert "max_size" in issue.body and "m5.2xlarge" in issue.body

    team.apply_by_hand()  # the drift is put right
    gone = flow.night()
    assert gone.conclusion == "success", gone.output
    assert issue.state == "closed"
    assert "No drift any more" in issue.comments[-1].body
    assert len([i for i in flow.github.issues() if marked("drift", CONFIG) in i.body]) == 1
    assert len(flow.github.issues()) == 1 + 80  # the drift issue and the unrelated ones
