"""Compute configs: the head node, worker groups and their ranking."""

from __future__ import annotations

from collections.abc import Iterator

from reconciler.checks.common import error
from reconciler.loading.configuration import Configuration, Finding
from schemas import (
    ComputeConfig,
    MachinePool,
)
from schemas.text import did_you_mean


def compute_configs(config: Configuration) -> Iterator[Finding]:
    pools = {p.name: p for p in config.of_kind(MachinePool)}
    for cc in config.of_kind(ComputeConfig):
        head = cc.head_node
        if head.market_type != "ON_DEMAND":
            yield error(
                config,
                cc,
                "head-node-on-demand",
                f"the head node must be on-demand, not {head.market_type}",
                "head_node",
                "market_type",
                hint="set market_type: ON_DEMAND",
            )
        if head.flags and head.flags.cloud_deployment and head.flags.cloud_deployment.machine_pool:
            yield error(
                config,
                cc,
                "head-node-on-demand",
                "the head node cannot come from a machine pool; it must be an on-demand "
                "instance that reaches every pool node",
                "head_node",
                "flags",
                "cloud_deployment",
                "machine_pool",
            )
        seen_groups: set[str] = set()
        for index, group in enumerate(cc.worker_nodes):
            if group.group_name in seen_groups:
                yield error(
                    config,
                    cc,
                    "duplicate-worker-group",
                    f"two worker groups are named `{group.group_name}`"
                    + ("" if group.name else " (the name defaults to instance_type)"),
                    "worker_nodes",
                    index,
                    "name" if group.name else "instance_type",
                    hint="give each group a distinct `name`",
                )
            seen_groups.add(group.group_name)
            pool = pools.get(group.machine_pool or "")
            if pool is not None and pool.machine_type(group.instance_type) is None:
                yield error(
                    config,
                    cc,
                    "unknown-reference",
                    f"machine pool `{pool.name}` has no machine type `{group.instance_type}`",
                    "worker_nodes",
                    index,
                    "instance_type",
                    hint=did_you_mean(
                        group.instance_type, [m.machine_type for m in pool.machine_types]
                    ),
                )
        groups = {g.group_name for g in cc.worker_nodes}
        for r, ranker in enumerate(cc.flags.instance_ranking_strategy):
            for o, name in enumerate(ranker.ranker_config.group_order):
                if name not in groups:
                    yield error(
                        config,
                        cc,
                        "unknown-reference",
                        f"group_order names `{name}`, which is not a worker group of `{cc.name}`",
                        "flags",
                        "instance_ranking_strategy",
                        r,
                        "ranker_config",
                        "group_order",
                        o,
                        hint=did_you_mean(name, groups),
                    )
