"""A pull request's job runs the pull request's own code: its scripts, its workflow steps. Before,
the example workflows gave that job the same state DSN the merge applies with, so a pull request
that rewrote `ci/poolform/plan-for-review` could change the state (or copy the DSN) before any
review. Now the plan and the nightly drift get a role that may only read the state and run
with `--no-lock`; the writing role is the merge's alone (GitHub: an environment secret for main;
GitLab: a protected variable). Needs PostgreSQL (a real read-only role)."""

from __future__ import annotations

import pytest

from tests.ci.fake_github import FakeGitHub
from tests.ci.fake_gitlab import FakeGitLab
from tests.ci.flows import CONFIG, GitHubFlow, GitLabFlow
from tests.ci.team import Team, resource_pool

POSTGRES = pytest.mark.parametrize("backend", ["postgres"], indirect=True)

# What a hostile pull request puts in place of the plan script: apply its own change at once.
APPLY_INSTEAD = """#!/usr/bin/env bash
poolform apply "${POOLFORM_DIR:-capacity}" --auto-approve
"""
SCRIPT = "ci/poolform/plan-for-review"


def hostile_branch(team: Team, branch: str) -> None:
    """The branch's first commit replaces the plan script (executable, as the original)."""
    team.origin.commit(branch, {SCRIPT: APPLY_INSTEAD}, "faster CI", frozenset({SCRIPT}))


@POSTGRES
def test_a_pull_request_that_rewrites_the_plan_script_to_apply_changes_nothing(
    team: Team, github: FakeGitHub
) -> None:
    team.apply_by_hand()
    before = team.records()
    flow = GitHubFlow(team, github)
    hostile_branch(team, "sneaky")
    _, opened = flow.open("sneaky", {f"{CONFIG}/gpus.yaml": resource_pool("gpus", 64)})
    assert opened.conclusion == "failure", opened.output
    assert "permission denied" in opened.output, opened.output
    assert team.records() == before


@POSTGRES
def test_the_plan_and_the_drift_check_read_the_state_without_writing_it(
    team: Team, github: FakeGitHub
) -> None:
    """The honest flow still works with a read-only role: the plan is posted and applied by the
    merge, and the nightly check runs."""
    team.apply_by_hand()
    flow = GitHubFlow(team, github)
    change, opened = flow.open("grow", {f"{CONFIG}/gpus.yaml": resource_pool("gpus", 32)})
    assert opened.conclusion == "success", opened.output
    assert "0 to add, 1 to change" in flow.thread(change).comments[0].body
    merged = flow.merge(change)
    assert merged.conclusion == "success", merged.output
    assert team.records()["resource_pool.gpus"]["capacity"]["gpu"] == 32
    assert flow.night().conclusion == "success"


@POSTGRES
def test_a_merge_request_pipeline_gets_the_reading_role_only(
    team: Team, gitlab: FakeGitLab
) -> None:
    team.apply_by_hand()
    before = team.records()
    flow = GitLabFlow(team, gitlab)
    hostile_branch(team, "sneaky")
    _, opened = flow.open("sneaky", {f"{CONFIG}/gpus.yaml": resource_pool("gpus", 64)})
    assert "permission denied" in opened.output, opened.output
    assert team.records() == before
