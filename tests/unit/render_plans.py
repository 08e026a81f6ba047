"""Hand-built plans for the renderer unit tests."""

from __future__ import annotations

from typing import Any

from reconciler.plan.model import (
    Action,
    AttributeChange,
    ChangeKey,
    Plan,
    ReplaceStrategy,
    ResourceChange,
    Rolling,
)

HASH = "sensitive:sha256:" + "ab" * 32


def plan_of(*changes: ResourceChange, edges: tuple[tuple[str, str], ...] = ()) -> Plan:
    return Plan(
        config_digest="d" * 64,
        lineage="00000000-0000-4000-8000-000000000000",
        serial=3,
        changes=tuple(changes),
        order=(tuple(c.key for c in changes),),
        edges=tuple((ChangeKey(a), ChangeKey(b)) for a, b in edges),
    )


def create(address: str, rtype: str, after: dict[str, Any]) -> ResourceChange:
    kaa = (AttributeChange("id", None, None, known_after_apply=True),)
    return ResourceChange(address, rtype, Action.CREATE, "not yet created", kaa, after=after)


def update(
    address: str,
    rtype: str,
    before: dict[str, Any],
    after: dict[str, Any],
    *attrs: AttributeChange,
    kind: str = "resize",
) -> ResourceChange:
    return ResourceChange(
        address,
        rtype,
        Action.UPDATE,
        "resize in place",
        attrs,
        update_kind=kind,
        before=before,
        after=after,
    )


def replace(
    address: str,
    rtype: str,
    strategy: ReplaceStrategy,
    *attrs: AttributeChange,
    rolling: Rolling | None = None,
) -> ResourceChange:
    forced = tuple(a.path for a in attrs if a.forces_replacement)
    reason = ", ".join(f"`{p}`" for p in forced) + " forces replacement"
    return ResourceChange(
        address,
        rtype,
        Action.REPLACE,
        reason,
        attrs,
        replace_strategy=strategy,
        forced_by=forced,
        rolling=rolling,
        before={},
        after={},
    )


def delete(address: str, rtype: str, before: dict[str, Any]) -> ResourceChange:
    return ResourceChange(
        address, rtype, Action.DELETE, "no longer in the configuration", before=before
    )


def mixed_plan() -> Plan:
    """2 to add, 1 to change, 1 to replace, 0 to destroy."""
    before = {"partitions": [{"name": "a", "size": 4}], "max_size": 4}
    after = {"partitions": [{"name": "a", "size": 6}], "max_size": 6}
    return plan_of(
        create("resource_pool.gpus", "resource_pool", {"capacity": {"gpu": 8}, "parent": None}),
        create(
            "subject_policy.team",
            "subject_policy",
            {"pool": "gpus", "token": HASH, "reserved": {"gpu": 2}},
        ),
        update(
            "machine_pool.p.machine_type.cpu",
            "machine_type",
            before,
            after,
            AttributeChange("max_size", 4, 6),
            AttributeChange("partitions[0].size", 4, 6),
        ),
        replace(
            "machine_pool.p.machine_type.h100",
            "machine_type",
            ReplaceStrategy.DESTROY_BEFORE_CREATE,
            AttributeChange(
                "launch_templates[0].instance_type",
                "p5.48xlarge",
                "p4de.24xlarge",
                forces_replacement=True,
            ),
            rolling=Rolling(instances=4, batch_size=1, batches=4, max_surge=0, max_unavailable=1),
        ),
        edges=(("resource_pool.gpus", "subject_policy.team"),),
    )


def policy_updates(count: int) -> Plan:
    changes = []
    for n in range(count):
        before = {"pool": "gpus", "reserved": {"gpu": 2, "cpu": 8}}
        after = {"pool": "gpus", "reserved": {"gpu": 4, "cpu": 8}}
        changes.append(
            update(
                f"subject_policy.team-{n:03d}",
                "subject_policy",
                before,
                after,
                AttributeChange("reserved.gpu", 2, 4),
                kind="metadata",
            )
        )
    return plan_of(*changes)
