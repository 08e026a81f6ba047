from __future__ import annotations

from reconciler.plan.model import AttributeChange, ReplaceStrategy
from reconciler.render import render_text
from reconciler.render.common import split_path
from tests.unit.render_plans import HASH, mixed_plan, plan_of, replace, update


def test_summary_line_and_legend() -> None:
    text = render_text(mixed_plan())
    assert text.endswith("Plan: 2 to add, 1 to change, 1 to replace, 0 to destroy.\n")
    assert "  + create\n  ~ update in place\n-/+ destroy and then create replacement\n" in text
    assert "+/-" not in text and "  - destroy" not in text


def test_no_changes() -> None:
    assert render_text(plan_of()) == "No changes. Your capacity matches the configuration.\n"


def test_nested_update_and_headers() -> None:
    text = render_text(mixed_plan())
    assert "  # machine_pool.p.machine_type.cpu will be updated in place (resize)\n" in text
    assert (
        "      ~ partitions = [\n"
        "          ~ [0] = {\n"
        "              ~ size = 4 -> 6\n"
        "            }\n"
        "        ]\n"
    ) in text


def test_replace_forces_and_rolling() -> None:
    text = render_text(mixed_plan())
    assert "must be replaced (`launch_templates[0].instance_type` forces replacement)" in text
    assert '-/+ machine_type "machine_pool.p.machine_type.h100" {' in text
    assert '~ instance_type = "p5.48xlarge" -> "p4de.24xlarge" # forces replacement' in text
    assert "# rolling: 4 instances in 4 batches of 1 (max_surge 0, max_unavailable 1)" in text
    cbd = plan_of(
        replace(
            "x.y",
            "t",
            ReplaceStrategy.CREATE_BEFORE_DESTROY,
            AttributeChange("a", 1, 2, forces_replacement=True),
        )
    )
    assert '+/- t "x.y" {' in render_text(cbd)


def test_create_shows_after_flattened_and_known_after_apply() -> None:
    text = render_text(mixed_plan())
    assert "+ id           = (known after apply)" in text
    assert "+ capacity.gpu = 8" in text
    assert "parent" not in text  # nulls are not shown on create


def test_sensitive_values_are_masked() -> None:
    secret = update(
        "t.a",
        "t",
        {},
        {},
        AttributeChange("token", "old-secret", "new-secret", sensitive=True),
        AttributeChange("other", HASH, HASH.replace("ab", "cd")),
    )
    text = render_text(plan_of(secret)) + render_text(mixed_plan())
    assert "secret" not in text and "sensitive:sha256" not in text
    assert "~ token = (sensitive)" in text and "+ token        = (sensitive)" in text


def test_colour_only_when_asked() -> None:
    assert "\x1b[" not in render_text(mixed_plan())
    coloured = render_text(mixed_plan(), color=True)
    for code in ("\x1b[32m", "\x1b[33m", "\x1b[35m"):
        assert code in coloured
    assert "\x1b[35m-/+\x1b[0m" in coloured


def test_deterministic() -> None:
    assert render_text(mixed_plan()) == render_text(mixed_plan())


def test_split_path_prefers_real_keys() -> None:
    before = {"file_mounts": {"/data/x.csv": "s3://b/x.csv"}}
    assert split_path("file_mounts./data/x.csv", before) == ["file_mounts", "/data/x.csv"]
    assert split_path("partitions[0].rules[1].selector.team") == [
        "partitions",
        0,
        "rules",
        1,
        "selector",
        "team",
    ]
