"""The pull request workflow plans only pull requests into main, the branch whose merges the
merge workflow applies. A pull request into another branch (a release branch, a stacked pull
request) got a plan comment saying "Merging applies exactly this plan" while its merge applies
nothing, and its job read the state with the DSN and the cloud role for nothing. The same for
GitLab's merge requests and the default branch."""

from __future__ import annotations

from tests.ci import actions, gitlab_ci
from tests.ci.flows import PIPELINE, WORKFLOWS


def _pull_request_into(base: str) -> actions.Event:
    payload = {
        "number": 3,
        "pull_request": {
            "number": 3,
            "head": {"sha": "a" * 40, "repo": {"full_name": "acme/capacity"}},
            "base": {"ref": base},
        },
    }
    return actions.Event(
        "pull_request", "a" * 40, "refs/pull/3/merge", payload, ["capacity/x.yaml"]
    )


def test_only_pull_requests_into_the_branch_the_merge_workflow_applies_are_planned() -> None:
    plan = actions.load(WORKFLOWS / "poolform-pull-request.yml")
    merge = actions.load(WORKFLOWS / "poolform-merge.yml")
    assert actions.triggered(plan, _pull_request_into("main"))
    assert not actions.triggered(plan, _pull_request_into("release-1"))
    assert plan["on"]["pull_request"]["branches"] == merge["on"]["push"]["branches"]


def test_only_merge_requests_into_the_default_branch_are_planned() -> None:
    config = gitlab_ci.load(PIPELINE)

    def jobs(target: str) -> list[str]:
        variables = {
            "CI_PIPELINE_SOURCE": "merge_request_event",
            "CI_DEFAULT_BRANCH": "main",
            "CI_MERGE_REQUEST_IID": "3",
            "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": target,
        }
        return gitlab_ci.selected_jobs(config, variables, ["capacity/x.yaml"])

    assert jobs("main") == ["poolform-plan"]
    assert jobs("release-1") == []
