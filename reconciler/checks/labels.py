"""GCP labels written in `advanced_instance_config.instanceProperties.labels`: GCE refuses the
whole template (400 at insert) for a key or value outside its rules, so they are refused here,
at validate, with the file and line, before any other resource of the apply is changed.

GCE's rules (resource labels): a key is 1-63 characters, starting with a lowercase letter, of
lowercase letters, digits, `_` and `-`; a value is 0-63 of the same; international letters count
when they are lowercase (Unicode Ll) or caseless (Lo); at most 64 labels, two of them poolform's.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from reconciler.checks.common import error
from reconciler.loading.configuration import Configuration, Finding
from schemas import ComputeConfig, MachinePool
from schemas.base import Document

_PROPERTY_KEYS = ("instanceProperties", "instance_properties")
MAX_LENGTH = 63
MAX_USER_LABELS = 62  # GCE's 64, less poolform-lineage and poolform-address


def _letter(char: str) -> bool:
    return unicodedata.category(char) in ("Ll", "Lo")


def _allowed(char: str) -> bool:
    return _letter(char) or unicodedata.category(char) == "Nd" or char in "_-"


def label_problem(text: str, *, key: bool) -> str | None:
    """Why GCE refuses `text` as a label key (or value), or None."""
    what = "key" if key else "value"
    if key and not text:
        return "a label key cannot be empty"
    if len(text) > MAX_LENGTH:
        return f"a label {what} has at most {MAX_LENGTH} characters (this one has {len(text)})"
    if key and not _letter(text[0]):
        return f"a label key starts with a lowercase letter, not {text[0]!r}"
    bad = next((c for c in text if not _allowed(c)), None)
    if bad is not None:
        upper = " (GCE labels are lowercase)" if bad != bad.lower() else ""
        return (
            f"a label {what} holds only lowercase letters, digits, `_` and `-`, not {bad!r}{upper}"
        )
    return None


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
            problem = label_problem(str(name), key=True)
            if problem is None and not isinstance(value, str):
                problem = f'a label value is a string: quote it ("{value}")'
            if problem is None:
                problem = label_problem(value, key=False)
            if problem is not None:
                yield error(
                    config, model, "gcp-label", f"label `{name}`: {problem}", *where, str(name),
                    hint="GCE refuses the instance template otherwise",
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
