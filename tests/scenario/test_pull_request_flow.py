"""What CI workflows need from poolform (issue 14, item 2): a Markdown plan that names its
commit and state serial and carries a marker, a label that travels with the plan file, a
200-resource plan comment under GitHub's limit with the risky changes first, and a stale plan
refused with "re-plan" and nothing applied."""

from __future__ import annotations

import json
import re
from pathlib import Path

from markdown_it import MarkdownIt

from reconciler.checks import load_configuration
from reconciler.plan.expand import expand
from reconciler.workspace import secret_salt
from state import ResourceRecord
from state.sqlite import SqliteStateBackend, default_state_path
from tests.scenario.installed import poolform
from tests.scenario.state_view import recorded_addresses

GITHUB_COMMENT_LIMIT = 65_536
SHA = "3f786850e387550fdab836ed7e6dc881de23001b"


def test_the_comment_names_its_commit_serial_and_marker(quickstart: Path) -> None:
    assert poolform("apply", quickstart, "--auto-approve").returncode == 0
    pool = quickstart / "resource-pool.yaml"
    pool.write_text(pool.read_text().replace("gpu: 16", "gpu: 24"))
    serial = json.loads(poolform("state", "pull", "--chdir", quickstart).stdout)["serial"]

    github = poolform("plan", quickstart, "--markdown", env={"GITHUB_SHA": SHA})
    lines = github.stdout.splitlines()
    assert lines[0] == f"<!-- poolform-plan: {quickstart} -->"
    assert f"computed at commit `{SHA}` against state serial {serial} " in github.stdout

    gitlab = poolform(
        "plan", quickstart, "--markdown", "--label", "!42", env={"CI_COMMIT_SHA": "c0ffee"}
    )
    assert gitlab.stdout.splitlines()[0] == "<!-- poolform-plan: _42 -->"
    assert "computed at commit `c0ffee`" in gitlab.stdout

    told = poolform("plan", quickstart, "--markdown", "--commit", "abc", env={"GITHUB_SHA": SHA})
    assert "computed at commit `abc`" in told.stdout
    unknown = poolform(
        "plan", quickstart, "--markdown", env={"GITHUB_SHA": "", "CI_COMMIT_SHA": ""}
    )
    assert "computed at an unknown commit" in unknown.stdout

    drift = poolform("drift", quickstart, "--markdown")
    assert drift.stdout.splitlines()[0] == f"<!-- poolform-drift: {quickstart} -->"


def test_a_label_travels_with_the_plan_file(quickstart: Path, tmp_path: Path) -> None:
    plan_file = tmp_path / "pr-7.plan"
    planned = poolform(
        "plan", quickstart, "-out", plan_file, "--label", "pull request #7", env={"GITHUB_SHA": SHA}
    )
    assert planned.returncode == 0, planned.stderr
    expected = f"The plan for pull request #7, made at commit {SHA} against state serial 0."
    assert poolform("show", plan_file).stdout.splitlines()[0] == expected
    comment = poolform("show", plan_file, "--markdown").stdout
    assert comment.splitlines()[0] == "<!-- poolform-plan: pull_request_#7 -->"
    applied = poolform("apply", plan_file, "--json")
    assert applied.returncode == 0, applied.stderr
    assert json.loads(applied.stdout.splitlines()[-1])["label"] == "pull request #7"
    again = tmp_path / "again.plan"
    assert poolform("plan", quickstart, "-out", again, "--label", "pr-7 again").returncode == 0
    echoed = poolform("apply", again)
    assert echoed.stdout.startswith("The plan for pr-7 again, made at an unknown commit")


def two_hundred(tmp_path: Path) -> tuple[Path, Path]:
    """A configuration applied with 160 resources, and its next version: 50 machine types
    replaced, 30 resource pools deleted, 40 created, 50 policies updated (200 addresses)."""

    def write(directory: Path, *, instance: str, pools: list[str], priority: int) -> Path:
        directory.mkdir()
        machine_types = "".join(
            f"  - machine_type: t{n:03d}\n"
            f"    launch_templates: [{{instance_type: {instance}}}]\n"
            "    partitions: [{name: any, size: 1}]\n"
            for n in range(50)
        )
        (directory / "machines.yaml").write_text(
            f"kind: MachinePool\nname: fleet\nmachine_types:\n{machine_types}"
        )
        (directory / "pools.yaml").write_text(
            "".join(
                f"---\nkind: ResourcePool\nname: {name}\n"
                f"description: {'capacity for the team that owns ' + name + '; ' * 1}"
                f"{'kept for the quarterly training runs and evaluations ' * 30}\n"
                "capacity: {gpu: 8, cpu: 64}\n"
                for name in pools
            )
        )
        (directory / "policies.yaml").write_text(
            "".join(
                f"---\nkind: SubjectPolicy\nname: team-{n:03d}\nsubject: team/{n}\n"
                f"pool: rp-{n % 30:03d}\npriority: {priority}\n"
                for n in range(50)
            )
        )
        return directory

    before = write(
        tmp_path / "before", instance="m5.large",
        pools=[f"rp-{n:03d}" for n in range(60)], priority=1,
    )  # fmt: skip
    after = write(
        tmp_path / "after", instance="c5.xlarge",
        pools=[f"rp-{n:03d}" for n in range(30)] + [f"rp-{n:03d}" for n in range(100, 140)],
        priority=2,
    )  # fmt: skip
    return before, after


def recorded_as_applied(applied: Path, target: Path) -> None:
    """State in `target` as if `applied` had been applied there."""
    backend = SqliteStateBackend(default_state_path(target))
    try:
        lineage = backend.read().lineage
        configuration = load_configuration(applied)
        salt = secret_salt(load_configuration(target), lineage)
        for resource in expand(configuration, salt, environment={}).values():
            backend.write_resource(
                ResourceRecord(
                    resource.address, resource.resource_type, resource.attributes,
                    {"id": resource.address}, resource.dependencies,
                ),
                expected_lineage=lineage,
            )  # fmt: skip
    finally:
        backend.close()


def test_a_200_resource_comment_fits_github_with_risky_changes_first(tmp_path: Path) -> None:
    before, after = two_hundred(tmp_path)
    recorded_as_applied(before, after)
    plan_file = tmp_path / "pr-200.plan"
    result = poolform("plan", after, "--no-refresh", "--markdown", "-out", plan_file)
    assert result.returncode == 0, result.stderr
    comment = result.stdout
    assert len(comment) < GITHUB_COMMENT_LIMIT
    assert comment.splitlines()[1].startswith(
        "### poolform plan: 40 to add, 50 to change, 50 to replace, 30 to destroy"
    )
    headings = [
        t.content
        for t, opened in zip(
            MarkdownIt().parse(comment)[1:], MarkdownIt().parse(comment), strict=False
        )
        if opened.type == "heading_open"
    ]
    assert headings[:2] == ["poolform plan: 40 to add, 50 to change, 50 to replace, 30 to destroy",
                            "Replacements and deletions"]  # fmt: skip
    risky = comment.split("#### Replacements and deletions", 1)[1].split("\n\n", 2)[1]
    listed = re.findall(r"\*\*`([^`]+)`\*\* \((replace|destroy)\)", risky)
    assert sorted(a for a, _ in listed) == sorted(
        [f"machine_pool.fleet.machine_type.t{n:03d}" for n in range(50)]
        + [f"resource_pool.rp-{n:03d}" for n in range(30, 60)]
    )
    first_detail = comment.index("<details>")
    assert comment.index("#### Replacements and deletions") < first_detail
    cut = re.search(r"… (.*) not shown; run `poolform show (\S+)`", comment)
    assert cut is not None and cut.group(2) == str(plan_file)  # what was cut, and where it is
    assert "more create" in cut.group(1) and "replacement" not in cut.group(1)


def test_a_stale_plan_is_refused_with_re_plan_and_applies_nothing(
    quickstart: Path, tmp_path: Path
) -> None:
    reviewed = tmp_path / "reviewed.plan"
    assert poolform("plan", quickstart, "-out", reviewed).returncode == 0
    # Someone else applies first: the state moves on.
    assert (
        poolform(
            "apply", quickstart, "--auto-approve", "--target", "resource_pool.team-quota"
        ).returncode
        == 0
    )
    serial = json.loads(poolform("state", "pull", "--chdir", quickstart).stdout)["serial"]
    refused = poolform("apply", reviewed)
    assert refused.returncode == 1
    assert "re-plan" in refused.stderr and "poolform plan -out FILE" in refused.stderr
    assert "nothing was applied" in refused.stderr
    assert recorded_addresses(quickstart) == ["resource_pool.team-quota"]
    assert json.loads(poolform("state", "pull", "--chdir", quickstart).stdout)["serial"] == serial

    # The configuration moving on voids a plan too.
    fresh = tmp_path / "fresh.plan"
    assert poolform("plan", quickstart, "-out", fresh).returncode == 0
    pool = quickstart / "resource-pool.yaml"
    pool.write_text(pool.read_text().replace("gpu: 16", "gpu: 24"))
    refused = poolform("apply", fresh)
    assert refused.returncode == 1 and "re-plan" in refused.stderr
    assert recorded_addresses(quickstart) == ["resource_pool.team-quota"]
