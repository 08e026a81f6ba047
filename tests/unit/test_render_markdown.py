from __future__ import annotations

import re

from reconciler.plan.model import AttributeChange
from reconciler.render import render_markdown
from tests.unit.render_plans import HASH, delete, mixed_plan, plan_of, policy_updates, update


def test_title_table_and_reasons() -> None:
    md = render_markdown(mixed_plan())
    assert md.startswith("### poolform plan: 2 to add, 1 to change, 1 to replace, 0 to destroy\n")
    assert "| add | 2 |" in md and "| replace | 1 |" in md
    assert "#### Replacements and deletions" in md
    assert (
        "**`machine_pool.p.machine_type.h100`** (replace): `launch_templates[0].instance_type`"
        in md
    )
    assert "```mermaid\nflowchart LR" in md
    assert "+ partitions[0].size = 6" in md and "- partitions[0].size = 4" in md


def test_hundred_same_shape_updates_are_one_short_section() -> None:
    md = render_markdown(policy_updates(100))
    assert len(md) < 8_000, len(md)
    assert "100 subject policies: <code>reserved.gpu</code> changed" in md
    assert all(f"subject_policy.team-{n:03d}" in md for n in range(100))
    assert md.count("<details>") == 1
    assert "```mermaid" not in md  # more than 50 changes


def test_hard_cap_cuts_in_place_details_first() -> None:
    changes = [
        update(
            f"subject_policy.p{n}",
            "subject_policy",
            {},
            {},
            AttributeChange(f"field_{n}", "x" * 50, "y" * 50),
        )
        for n in range(200)
    ]
    gone = delete("resource_pool.old", "resource_pool", {"capacity": {"gpu": 1}})
    md = render_markdown(plan_of(*changes, gone), limit=5_000, plan_file="pr-12.plan")
    assert len(md) < 5_000
    assert "**`resource_pool.old`** (destroy): no longer in the configuration" in md
    match = re.search(
        r"… (\d+) more in-place updates not shown; run `poolform show pr-12.plan`", md
    )
    assert match is not None
    shown = md.count("<code>~ subject_policy.p")
    assert shown + int(match.group(1)) == 200


def test_default_limit_holds_for_huge_plans() -> None:
    changes = [
        update(f"subject_policy.p{n:05d}", "subject_policy", {}, {}, AttributeChange(f"f{n}", 1, 2))
        for n in range(3_000)
    ]
    assert len(render_markdown(plan_of(*changes))) < 60_000


def test_sensitive_masked_and_no_changes() -> None:
    secret = update(
        "t.a",
        "t",
        {},
        {},
        AttributeChange("token", "s3cr3t", "n3w", sensitive=True),
        AttributeChange("other", None, HASH),
    )
    md = render_markdown(plan_of(secret))
    assert "s3cr3t" not in md and "n3w" not in md and "sensitive:sha256" not in md
    assert "! token = (sensitive) (changed)" in md and "+ other = (sensitive)" in md
    assert "No changes" not in md
    assert render_markdown(plan_of()).startswith(
        "### poolform plan: No changes. Your capacity matches the configuration\n"
    )


def test_the_cut_note_says_how_to_see_everything_when_nothing_was_saved() -> None:
    changes = [
        update(f"subject_policy.p{n}", "subject_policy", {}, {}, AttributeChange(f"f_{n}", 1, 2))
        for n in range(200)
    ]
    md = render_markdown(plan_of(*changes), limit=5_000)
    assert "plan.out" not in md
    assert md.rstrip().endswith(
        "not shown; save the plan with `poolform plan -out FILE` and run `poolform show FILE`"
    )
