"""GCP labels written in `advanced_instance_config.instanceProperties.labels` (either
spelling), checked by the provider's rules (providers/gcp/labels.py) at the label at fault: GCE
refuses a template whose labels break them only at apply, after other resources were made.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from providers.gcp.labels import MAX_USER_LABELS, OWN_KEYS, user_label_problem
from reconciler.checks.common import error
from reconciler.loading.configuration import Configuration, Finding
from schemas import ComputeConfig, MachinePool
from schemas.base import Document

_PROPERTY_KEYS = ("instanceProperties", "instance_properties")


def _labels_findings(
    config: Configuration, model: Document, advanced: Mapping[str, Any], *path: str | int
) -> Iterator[Finding]:
    for spelling in _PROPERTY_KEYS:
        properties = advanced.get(spelling)
        labels = properties.get("labels") if isinstance(properties, Mapping) else None
        if not isinstance(labels, Mapping):
            continue
        where = (*path, "advanced_instance_config", spelling, "labels")
        if len(labels) > MAX_USER_LABELS:
            yield error(
                config, model, "gcp-label", f"GCE allows at most {MAX_USER_LABELS} labels here "
                f"(64, two of them poolform's), not {len(labels)}", *where,
            )  # fmt: skip
        for name, value in labels.items():
            problem = user_label_problem(name, value)
            if problem is not None:
                yield error(
                    config, model, "gcp-label", f"label `{name}`: {problem}", *where, str(name),
                    hint=None if name in OWN_KEYS else "GCE refuses the instance template otherwise",
                )  # fmt: skip


def gcp_labels(config: Configuration) -> Iterator[Finding]:
    if config.cluster.provider != "gcp":
        return
    for pool in config.of_kind(MachinePool):
        for index, machine in enumerate(pool.machine_types):
            yield from _labels_findings(
                config, pool, machine.template.advanced_instance_config,
                "machine_types", index, "launch_templates", 0,
            )  # fmt: skip
    for cc in config.of_kind(ComputeConfig):
        yield from _labels_findings(config, cc, cc.advanced_instance_config)
        yield from _labels_findings(config, cc, cc.head_node.advanced_instance_config, "head_node")
        for index, group in enumerate(cc.worker_nodes):
            yield from _labels_findings(
                config, cc, group.advanced_instance_config, "worker_nodes", index
            )
