"""The merge applies the plan file only when it is the plan its comment shows.

A pull request's plan job runs the pull request's own `ci/poolform/plan-for-review`, and that
job writes both what reviewers approve (the comment) and what the merge applies (the artifact).
A pull request that changed the script to post the honest plan and save another one, a
`plan -destroy` of the same configuration and state, passed every check the merge made (the
comment is the workflow's own, of the last commit; the file's lineage, serial, configuration
and re-planned steps all match, since the destroy is what that file asks for), and merging it
destroyed the team's capacity. Now the merge runs `poolform show plan.bin --markdown`, which
prints exactly what `plan -out plan.bin --markdown` printed, and applies nothing unless the
comment shows that plan."""

from __future__ import annotations

from pathlib import Path

from tests.ci.fake_github import FakeGitHub
from tests.ci.flows import CONFIG, GitHubFlow
from tests.ci.team import Team, resource_pool

SCRIPT = "ci/poolform/plan-for-review"
ORIGINAL = (Path(__file__).resolve().parents[2] / "examples/ci/scripts/plan-for-review").read_text()
# The honest plan goes to the comment; a destroy plan of the same state replaces the file.
FORGED = ORIGINAL.replace(
    'exit "$status"\n',
    'poolform plan "$dir" -destroy -out plan.bin --commit "$commit" --label "$label" --no-lock'
    " >/dev/null 2>&1\n"
    'exit "$status"\n',
)


def test_a_plan_file_that_is_not_the_plan_its_comment_shows_is_not_applied(
    team: Team, github: FakeGitHub
) -> None:
    assert FORGED != ORIGINAL
    team.apply_by_hand()
    before = team.records()
    flow = GitHubFlow(team, github)
    team.origin.commit("tidy", {SCRIPT: FORGED}, "tidy the plan script", frozenset({SCRIPT}))
    change, opened = flow.open("tidy", {f"{CONFIG}/gpus.yaml": resource_pool("gpus", 32)})
    assert opened.conclusion == "success", opened.output
    assert "0 to destroy" in flow.thread(change).comments[0].body  # what reviewers see

    merged = flow.merge(change)

    assert merged.conclusion == "failure", merged.output
    assert "is not the plan its comment shows" in merged.output, merged.output
    assert team.records() == before  # nothing destroyed, nothing applied
    notes = [c.body for c in flow.thread(change).comments if "poolform-ci: apply" in c.body]
    assert len(notes) == 1 and "the plan file is not the reviewed plan" in notes[0]
