"""Two configurations in one repository, each with its own copy of the GitHub workflows (as
examples/ci/README.md says: change POOLFORM_DIR and the paths filters). A pull request that
touches both is planned twice, one plan per configuration, and its merge must apply each
configuration's own reviewed plan: never one configuration's plan in the other's job."""

from __future__ import annotations

from pathlib import Path

from tests.ci import actions
from tests.ci.fake_github import FakeGitHub
from tests.ci.flows import WORKFLOWS
from tests.ci.team import CLUSTER, CONFIG, Team, resource_pool

EU = "regions/eu"  # nested, as a monorepo keeps it


def _copy_for(directory: str, workflow: str, into: Path) -> Path:
    """The workflow as a team copies it for a second configuration."""
    text = (WORKFLOWS / workflow).read_text()
    text = text.replace(f"POOLFORM_DIR: {CONFIG}", f"POOLFORM_DIR: {directory}")
    text = text.replace(f'paths: ["{CONFIG}/**"]', f'paths: ["{directory}/**"]')
    assert directory in text
    path = into / f"eu-{workflow}"
    path.write_text(text)
    return path


def _pull_request(team: Team, number: int, head: str, base: str) -> actions.Event:
    payload = {
        "number": number,
        "pull_request": {
            "number": number,
            "head": {"sha": head, "repo": {"full_name": "acme/capacity"}},
        },
    }
    changed = team.origin.changed(base, head)
    return actions.Event("pull_request", head, f"refs/pull/{number}/merge", payload, changed)


def test_each_configuration_applies_its_own_reviewed_plan(
    team: Team, github: FakeGitHub, tmp_path: Path
) -> None:
    team.apply_by_hand()
    eu_cloud = tmp_path / "cloud-eu"
    eu_cloud.mkdir()

    def prepare(workspace: Path) -> None:
        team.link_cloud(workspace)
        (workspace / EU).mkdir(parents=True, exist_ok=True)
        (workspace / EU / ".poolform").symlink_to(eu_cloud, target_is_directory=True)

    runner = actions.Runner(
        github=github,
        origin=team.origin,
        work=tmp_path / "runners",
        environ=team.environ,
        secrets=team.backend.secrets,
        prepare=prepare,
        token=github.token,
    )
    runner.work.mkdir()
    copies = tmp_path / "eu-workflows"
    copies.mkdir()
    workflows = {
        CONFIG: (WORKFLOWS / "poolform-pull-request.yml", WORKFLOWS / "poolform-merge.yml"),
        EU: (
            _copy_for(EU, "poolform-pull-request.yml", copies),
            _copy_for(EU, "poolform-merge.yml", copies),
        ),
    }

    base = team.origin.head()
    head = team.origin.commit(
        "both",
        {
            f"{CONFIG}/gpus.yaml": resource_pool("gpus", 32),
            f"{EU}/cluster.yaml": CLUSTER.format(state="").replace("name: team", "name: eu"),
            f"{EU}/gpus.yaml": resource_pool("eu-gpus", 8),
        },
        "grow capacity, add the EU configuration",
    )
    number = github.open_thread("both", pull=True, head=head)
    for directory in (CONFIG, EU):  # the EU plan finishes last: its artifact is the newest
        planned = actions.run_workflow(
            workflows[directory][0], _pull_request(team, number, head, base), runner
        )
        assert planned.conclusion == "success", planned.output

    before = team.state()["serial"]
    merged = team.origin.merge("both")
    github.merge(number, merged)
    push = actions.Event("push", merged, "refs/heads/main", {}, team.origin.changed(base, merged))
    applied = {
        directory: actions.run_workflow(workflows[directory][1], push, runner)
        for directory in (CONFIG, EU)
    }
    for directory, run in applied.items():
        assert run.conclusion == "success", f"{directory}: {run.output}"
    assert team.records()["resource_pool.gpus"]["capacity"]["gpu"] == 32, (
        "capacity/'s reviewed plan was applied to capacity/"
    )
    assert team.state()["serial"] > before
    notes = [
        c.body for c in github.threads[number].comments if "Applied the reviewed plan" in c.body
    ]
    assert len(notes) == 2, "one apply note per configuration"
