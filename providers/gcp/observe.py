"""GCE resources as the `Observed` values refresh and drift see, assembled from batched lists.

One paginated list per resource type (templates, groups, autoscalers, instances), whatever the
number of groups; the join happens here, in memory:

- a group reports its current template's attributes (versions[0], else instanceTemplate), its
  zones (distributionPolicy; [] when poolform left the choice to GCE), its bounds (the
  autoscaler's minNumReplicas / maxNumReplicas; None when the autoscaler was deleted: bounds
  gone is drift), desired (targetSize) and running (its instances in RUNNING status);
- a template no group uses any more (its group deleted by hand, or an old template an
  interrupted replacement left) is reported on its own, ids {"template": name}, so refresh
  can adopt or clean it;
- a template swapped in by hand has a name outside poolform's pattern: it is fetched by name
  (one get each, only when that drift exists).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from providers.protocol import TAG_ADDRESS, TAG_LINEAGE, Observed

from .compute import Compute, Json
from .names import group_of_instance, last_segment, parse_description, tags_of
from .template import template_attributes, worker_attributes

_FILTER_CHUNK = 40  # names per `name eq "(a|b|...)"` filter: keeps a filter well under its limit


@dataclass
class Snapshot:
    templates: list[Json]
    groups: list[Json]
    autoscalers: list[Json]
    instances: list[Json]


def current_template(group: Json) -> str:
    versions = group.get("versions") or []
    url = versions[0].get("instanceTemplate") if versions else None
    return last_segment(str(url or group.get("instanceTemplate") or ""))


def group_zones(group: Json) -> list[str]:
    policy = group.get("distributionPolicy") or {}
    return [last_segment(z.get("zone", "")) for z in policy.get("zones") or []]


def snapshot_lineage(compute: Compute, name_filter: str, label_filter: str) -> Snapshot:
    return Snapshot(
        templates=compute.list_templates(name_filter),
        groups=compute.list_groups(name_filter),
        autoscalers=compute.list_autoscalers(name_filter),
        instances=compute.list_instances(label_filter),
    )


def snapshot_names(compute: Compute, groups: list[str], templates: list[str]) -> Snapshot:
    """Only these groups and templates (and the groups' autoscalers and instances)."""
    snap = Snapshot([], [], [], [])
    for chunk in _chunks(sorted(set(groups))):
        names = "|".join(re.escape(n) for n in chunk)
        snap.groups += compute.list_groups(f'name eq "({names})"')
        snap.autoscalers += compute.list_autoscalers(f'name eq "({names})"')
        snap.instances += compute.list_instances(f'name eq "({names})-[a-z0-9]+"')
    used = {current_template(g) for g in snap.groups}
    for chunk in _chunks(sorted(set(templates) | used)):
        names = "|".join(re.escape(n) for n in chunk)
        snap.templates += compute.list_templates(f'name eq "({names})"')
    return snap


def assemble(compute: Compute, snap: Snapshot, lineage: str | None) -> list[Observed]:
    """`lineage`: keep only resources whose description names it (a hash prefix could, very
    rarely, be shared by two lineages); None keeps what `read` asked for."""

    def ours(resource: Json) -> dict[str, Any]:
        described = parse_description(resource.get("description"))
        if lineage is not None and described.get(TAG_LINEAGE) != lineage:
            return {}
        return described

    templates = {t["name"]: t for t in snap.templates}
    bounds = {last_segment(a.get("target", "")): a for a in snap.autoscalers}
    running = Counter(
        group_of_instance(i["name"]) for i in snap.instances if i.get("status") == "RUNNING"
    )
    result: list[Observed] = []
    used: set[str] = set()
    for group in snap.groups:
        described = ours(group)
        if not described:
            continue
        template_name = current_template(group)
        used.add(template_name)
        template = templates.get(template_name) or compute.get_template(template_name)
        result.append(
            _observe_group(group, described, template, bounds.get(group["name"]), running)
        )
    for name, template in sorted(templates.items()):
        described = ours(template)
        if described and name not in used:
            result.append(_observe_loose_template(template, described))
    return sorted(result, key=lambda o: (o.address, sorted(o.provider_ids.items())))


def _observe_group(
    group: Json,
    described: dict[str, Any],
    template: Json | None,
    autoscaler: Json | None,
    running: Counter[str],
) -> Observed:
    resource_type = str(described.get("type", "machine_type"))
    policy = (autoscaler or {}).get("autoscalingPolicy") or {}
    attributes: dict[str, Any] = {
        "min_size": _int(policy.get("minNumReplicas")) if autoscaler else None,
        "max_size": _int(policy.get("maxNumReplicas")) if autoscaler else None,
        "desired": _int(group.get("targetSize")),
        "running": running[group["name"]],
    }
    ids = {"group": group["name"]}
    if template is not None:
        ids["template"] = template["name"]
        attributes.update(_template_view(template, resource_type))
    if resource_type == "machine_type":
        attributes["zones"] = group_zones(group) if described.get("zones") != "auto" else []
    return Observed(
        str(described.get(TAG_ADDRESS, "")), resource_type, ids, attributes, tags_of(described)
    )


def _observe_loose_template(template: Json, described: dict[str, Any]) -> Observed:
    resource_type = str(described.get("type", "machine_type"))
    return Observed(
        str(described.get(TAG_ADDRESS, "")),
        resource_type,
        {"template": template["name"]},
        _template_view(template, resource_type),
        tags_of(described),
    )


def _template_view(template: Json, resource_type: str) -> dict[str, Any]:
    attributes = template_attributes(template)
    if resource_type == "machine_type":
        return attributes
    # a worker pool: its setup and envs live in the startup script poolform wrote
    return {
        "instance_type": attributes["instance_type"],
        "market_type": attributes["market_type"],
        "template_version": attributes["template_version"],
        "workdir": None,
        "file_mounts": {},
        "secret_names": [],
        **worker_attributes(attributes["user_data"]),
    }


def _int(value: Any) -> int:
    return int(value or 0)


def _chunks(names: list[str]) -> Iterable[list[str]]:
    for start in range(0, len(names), _FILTER_CHUNK):
        yield names[start : start + _FILTER_CHUNK]
