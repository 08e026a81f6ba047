"""A 200-resource change, as a reviewer gets it: the comment the pull request workflow posts
stays under GitHub's 65,536-character limit (the fake API refuses longer ones, as GitHub does),
and every replacement and deletion is listed before anything else."""

from __future__ import annotations

import re

import pytest

from tests.ci.fake_github import FakeGitHub
from tests.ci.features import require_review_features
from tests.ci.flows import CONFIG, GitHubFlow
from tests.ci.team import Team

GITHUB_LIMIT = 65_536


def fleet(replaced: range, kept: range, created: range, instance_type: str) -> str:
    lines = ["kind: MachinePool", "name: fleet", "machine_types:"]
    for number in [*replaced, *kept]:
        lines += [
            f"  - machine_type: mt-{number:03d}",
            "    launch_templates:",
            f"      - instance_type: {instance_type if number in replaced else 'm5.large'}",
            "    partitions: [{name: any, size: 1}]",
        ]
    for number in created:  # verbose templates, so the details cannot all fit
        lines += [
            f"  - machine_type: mt-{number:03d}",
            "    launch_templates:",
            "      - instance_type: m5.large",
            "        zones: [us-east-1a, us-east-1b, us-east-1c]",
            "        advanced_instance_config:",
            f"          TagSpecifications: [{{ResourceType: instance, Tags: [{{Key: team, Value: t{number}}}]}}]",
            "    partitions:",
            "      - {name: first, size: 2}",
            "      - {name: second, size: 3}",
        ]
    return "\n".join(lines) + "\n"


def pools(count: int, gpu: int) -> str:
    return "".join(
        f"---\nkind: ResourcePool\nname: team-{n:03d}\ncapacity: {{gpu: {gpu}}}\n"
        for n in range(count)
    )


@pytest.fixture
def flow(team: Team, github: FakeGitHub) -> GitHubFlow:
    team.origin.commit(
        "main",
        {
            f"{CONFIG}/machine-pool.yaml": fleet(range(0), range(100), range(0), "m5.large"),
            f"{CONFIG}/gpus.yaml": pools(50, 4),
        },
        "a fleet of 150",
    )
    team.apply_by_hand()
    return GitHubFlow(team, github)


def test_a_200_resource_plan_comment_fits_github_with_replacements_and_deletions_first(
    flow: GitHubFlow,
) -> None:
    require_review_features()
    change, planned = flow.open(
        "reshape",
        {
            # 50 replaced, 50 deleted (mt-050..099 left out), 50 created, 50 resized in place
            f"{CONFIG}/machine-pool.yaml": fleet(range(50), range(0), range(100, 150), "c5.xlarge"),
            f"{CONFIG}/gpus.yaml": pools(50, 8),
        },
    )
    assert planned.conclusion == "success", planned.output
    (comment,) = flow.thread(change).comments
    body = comment.body
    assert len(body) < GITHUB_LIMIT
    assert "50 to add, 50 to change, 50 to replace, 50 to destroy" in body
    assert "not shown" in body, "the plan is long enough that the renderer had to cut"

    critical = [f"machine_pool.fleet.machine_type.mt-{n:03d}" for n in range(100)]
    for address in critical:
        assert f"**`{address}`**" in body, f"{address} is missing from the comment"
    last_critical = max(body.index(f"**`{address}`**") for address in critical)
    others = [
        m.start()
        for m in re.finditer(
            r"<code>[+~] (resource_pool|machine_pool)[^<]*</code>|resource pools:", body
        )
    ]
    assert others, "creates and updates are shown too, after the critical list"
    assert last_critical < min(others)
