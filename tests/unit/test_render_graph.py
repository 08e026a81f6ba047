from __future__ import annotations

from reconciler.plan.model import ChangeKey, Plan
from reconciler.render import render_dot, render_mermaid
from tests.unit.render_plans import create, mixed_plan, plan_of


def test_mermaid_nodes_edges_and_classes() -> None:
    text = render_mermaid(mixed_plan())
    assert text.startswith("flowchart LR\n")
    assert '  n_resource_pool_gpus["+ resource_pool.gpus"]:::create' in text
    assert '["-/+ machine_pool.p.machine_type.h100"]:::replace' in text
    assert "  n_resource_pool_gpus --> n_subject_policy_team" in text
    for name in ("create", "update", "replace"):
        assert f"classDef {name} " in text
    assert "classDef delete" not in text


def test_mermaid_ids_are_sanitised_and_unique() -> None:
    text = render_mermaid(plan_of(create("a.b-c", "t", {}), create("a.b_c", "t", {})))
    assert "n_a_b_c[" in text and "n_a_b_c_2[" in text


def test_dot_ranks_follow_the_order() -> None:
    base = mixed_plan()
    plan = Plan(
        base.config_digest,
        base.lineage,
        base.serial,
        base.changes,
        (
            (ChangeKey("resource_pool.gpus"), ChangeKey("machine_pool.p.machine_type.cpu")),
            (ChangeKey("subject_policy.team"), ChangeKey("machine_pool.p.machine_type.h100")),
        ),
        base.edges,
    )
    text = render_dot(plan)
    assert "rankdir=LR;" in text
    assert '{ rank=same; "resource_pool.gpus"; "machine_pool.p.machine_type.cpu"; }' in text
    assert '"resource_pool.gpus" -> "subject_policy.team";' in text
    assert 'label="-/+ machine_pool.p.machine_type.h100"' in text
    assert text.count("rank=same") == 2
