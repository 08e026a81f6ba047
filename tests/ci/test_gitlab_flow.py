"""The GitLab pipeline of examples/ci/gitlab/, run job by job through a merge request's life
against a fake GitLab API, on the local provider with the state on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest

from tests.ci.fake_gitlab import FakeGitLab
from tests.ci.features import BOTH_BACKENDS, require_review_features
from tests.ci.flows import CONFIG, GitLabFlow
from tests.ci.team import Team, applied_exactly, machine_pool, resource_pool


def marked(flow: str, directory: str) -> str:
    return f"<!-- poolform-ci: {flow} {directory} -->"


@pytest.fixture
def flow(team: Team, gitlab: FakeGitLab) -> GitLabFlow:
    team.apply_by_hand()
    return GitLabFlow(team, gitlab)


@BOTH_BACKENDS
def test_a_merge_request_is_planned_in_one_note_and_the_merge_applies_that_plan(
    flow: GitLabFlow, team: Team
) -> None:
    require_review_features()
    change, opened = flow.open("grow", {f"{CONFIG}/machine-pool.yaml": machine_pool(cpu=4)})
    assert opened.conclusion == "success", opened.output
    notes = [n for n in flow.request(change).notes if not n.system]
    assert len(notes) == 1 and notes[0].body.startswith(marked("plan", CONFIG))
    assert "0 to add, 1 to change" in notes[0].body and change.head[:12] in notes[0].body

    pushed = flow.push(change, {f"{CONFIG}/cpus.yaml": resource_pool("cpus", 0)})
    assert pushed.conclusion == "success", pushed.output
    notes = [n for n in flow.request(change).notes if not n.system]
    assert len(notes) == 1 and notes[0].edits == 1
    assert "1 to add, 1 to change" in notes[0].body and change.head[:12] in notes[0].body
    reviewed = flow.artifact(change)

    before = team.records()
    merged = flow.merge(change)
    assert merged.conclusion == "success", merged.output
    assert f"plan reviewed on merge request !{change.number}" in merged.output
    assert team.records() == applied_exactly(before, team.reviewed_changes(reviewed))
    applied = [n.body for n in flow.request(change).notes if marked("apply", CONFIG) in n.body]
    assert len(applied) == 1 and "Applied the reviewed plan" in applied[0]


def test_a_stale_plan_is_refused_at_merge_applies_nothing_and_the_merge_request_says_so(
    flow: GitLabFlow, team: Team
) -> None:
    require_review_features()
    first, planned = flow.open("batch", {f"{CONFIG}/machine-pool.yaml": machine_pool(batch=3)})
    second, also = flow.open("gpus", {f"{CONFIG}/gpus.yaml": resource_pool("gpus", 24)})
    assert planned.conclusion == also.conclusion == "success", planned.output + also.output
    assert flow.merge(first).conclusion == "success"
    after_first = team.state()

    refused = flow.merge(second)
    assert refused.code == 1
    assert "re-plan" in refused.output
    assert team.state() == after_first
    notes = [n.body for n in flow.request(second).notes if marked("apply", CONFIG) in n.body]
    assert len(notes) == 1 and "did not apply" in notes[0]


def test_a_failing_plan_posts_its_error_in_the_note_and_keeps_no_artifact(
    flow: GitLabFlow, team: Team
) -> None:
    require_review_features()
    broken = resource_pool("gpus", 16).replace("capacity:", "capacty:")
    change, failed = flow.open("typo", {f"{CONFIG}/gpus.yaml": broken})
    assert failed.code == 1
    (note,) = [n for n in flow.request(change).notes if not n.system]
    assert "poolform plan failed" in note.body and "capacty" in note.body
    assert not [job for p in flow.gitlab.pipelines for job in p.jobs if job.artifacts]


def test_drift_on_three_nights_is_one_issue_updated_twice_and_closed_when_gone(
    flow: GitLabFlow, team: Team
) -> None:
    for number in range(25):  # someone else's issues, more than a page of them
        flow.gitlab.open_issue(f"unrelated {number}", "text")
    changed = team.poolform(
        "local", "resize-group", "machine_pool.shared.machine_type.cpu", "--max", "5"
    )
    assert changed.returncode == 0, changed.stderr
    for _ in range(3):
        ran = flow.night()
        assert ran.conclusion == "success", ran.output
        drift = [i for i in flow.issues() if marked("drift", CONFIG) in i.description]
        assert len(drift) == 1
    (issue,) = drift
    assert issue.state == "opened" and issue.edits == 2 and "max_size" in issue.description

    team.apply_by_hand()
    gone = flow.night()
    assert gone.conclusion == "success", gone.output
    assert issue.state == "closed" and "No drift any more" in issue.notes[-1].body
    assert len(flow.issues()) == 26
