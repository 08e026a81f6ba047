"""Reading AWS back as `Observed` values: batched, never one call per resource.

list(lineage), whatever the number of groups and instances:
    describe_auto_scaling_groups    filtered by the lineage tag, 100 groups a page; each group
                                    comes with its instances inline (the running count)
    describe_launch_templates       filtered by the lineage tag, 200 a page
    describe_launch_template_versions  Versions=[$Latest] and no template id: the latest version
                                    of every template in the region, 200 a page
plus one describe_launch_template_versions per group whose version was pinned by hand to
something other than the latest (a drifted group, rare).

read(refs) names the groups (100 a call) and fetches the latest versions of their templates one
call per template, or with the all-templates sweep above when more than a few are asked for.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from providers.protocol import TAG_ADDRESS, TAG_LINEAGE, ErrorKind, Observed, ProviderError

from .errors import translate
from .settings import AwsClients
from .template import Defaults, template_view

GROUP_PAGE = 100  # the API's maximum MaxRecords for describe_auto_scaling_groups
TEMPLATE_PAGE = 200  # the API's maximum MaxResults for the launch template calls
ADDRESS_FILTER_VALUES = 100  # addresses per tag filter (EC2 accepts 200 values a filter)
PER_TEMPLATE_READS = 3
# On a group whose zones were not declared: the zones poolform chose, comma-separated, or
# ZONES_BY_SUBNETS when the settings' subnets place it. Not propagated to instances.
ZONES_TAG = "poolform:default-zones"
ZONES_BY_SUBNETS = "subnets"  # up to this many templates, one call each beats the sweep


@dataclass(frozen=True)
class Version:
    template_id: str
    number: int
    data: Mapping[str, Any]
    defaults: Defaults | None


def resource_type_of(address: str) -> str:
    return "worker_pool" if address.startswith("worker_pool.") else "machine_type"


def tags_of(items: Iterable[Mapping[str, Any]] | None) -> dict[str, str]:
    return {str(t["Key"]): str(t.get("Value", "")) for t in items or []}


def group_template(group: Mapping[str, Any]) -> tuple[str | None, str]:
    """The launch template id and version a group launches from."""
    spec = group.get("LaunchTemplate")
    if not spec:
        mixed = group.get("MixedInstancesPolicy") or {}
        spec = (mixed.get("LaunchTemplate") or {}).get("LaunchTemplateSpecification")
    if not spec:
        return None, "$Latest"
    return spec.get("LaunchTemplateId"), str(spec.get("Version") or "$Default")


def zones_view(group: Mapping[str, Any], tags: Mapping[str, str]) -> list[str]:
    """The group's zones as the configuration has them: [] while they are the ones poolform
    chose itself (no zones declared: the region's zones, or the subnets of the settings)."""
    actual = [str(z) for z in group.get("AvailabilityZones") or []]
    chosen = tags.get(ZONES_TAG)
    if chosen == ZONES_BY_SUBNETS or (chosen is not None and set(chosen.split(",")) == set(actual)):
        return []
    return actual


def running_count(group: Mapping[str, Any]) -> int:
    return sum(1 for i in group.get("Instances") or [] if i.get("LifecycleState") == "InService")


def observe_group(group: Mapping[str, Any], version: Version | None) -> Observed:
    tags = tags_of(group.get("Tags"))
    name = str(group["AutoScalingGroupName"])
    address = tags.get(TAG_ADDRESS, name)
    resource_type = resource_type_of(address)
    template_id, _ = group_template(group)
    ids = {"group": name}
    if template_id:
        ids["template"] = template_id
    attributes: dict[str, Any] = {
        "min_size": group["MinSize"],
        "max_size": group["MaxSize"],
        "desired": group["DesiredCapacity"],
        "running": running_count(group),
    }
    if version is not None:
        attributes.update(template_view(resource_type, version.data, version.defaults))
        attributes["template_version"] = version.number
        if resource_type == "machine_type":
            attributes["zones"] = zones_view(group, tags)
    elif template_id:
        # The template the group launches from was deleted behind poolform's back: the group
        # can launch nothing. Its other keys are left out rather than guessed; an instance type
        # of none is drift, and the plan replaces the group's template (a new one is made).
        attributes["instance_type"] = None
    return Observed(address, resource_type, ids, attributes, tags)


def observe_template(template: Mapping[str, Any], version: Version | None) -> Observed:
    """A launch template whose group is gone (deleted behind poolform's back, or half made)."""
    tags = tags_of(template.get("Tags"))
    address = tags.get(TAG_ADDRESS, str(template.get("LaunchTemplateName")))
    resource_type = resource_type_of(address)
    attributes: dict[str, Any] = {}
    if version is not None:
        attributes = template_view(resource_type, version.data, version.defaults)
        attributes["template_version"] = version.number
    ids = {"template": str(template["LaunchTemplateId"])}
    return Observed(address, resource_type, ids, attributes, tags)


def _version(item: Mapping[str, Any]) -> Version:
    return Version(
        str(item["LaunchTemplateId"]),
        int(item["VersionNumber"]),
        item.get("LaunchTemplateData") or {},
        Defaults.parse(item.get("VersionDescription")),
    )


class Reader:
    def __init__(self, clients: AwsClients):
        self.ec2 = clients.ec2
        self.autoscaling = clients.autoscaling

    # -- groups --------------------------------------------------------------------------------

    def groups_by_tag(self, lineage: str) -> list[dict[str, Any]]:
        pages = self.autoscaling.get_paginator("describe_auto_scaling_groups").paginate(
            Filters=[{"Name": f"tag:{TAG_LINEAGE}", "Values": [lineage]}],
            PaginationConfig={"PageSize": GROUP_PAGE},
        )
        with translate():
            return [g for page in pages for g in page["AutoScalingGroups"] if _alive(g)]

    def tagged_at(self, addresses: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
        """Groups and launch templates tagged with one of these addresses, whatever their
        lineage, as (kind, resource): one paginated call per kind per 100 addresses."""
        found: list[tuple[str, dict[str, Any]]] = []
        wanted = sorted(set(addresses))
        for start in range(0, len(wanted), ADDRESS_FILTER_VALUES):
            chunk = [
                {
                    "Name": f"tag:{TAG_ADDRESS}",
                    "Values": wanted[start : start + ADDRESS_FILTER_VALUES],
                }
            ]
            groups = self.autoscaling.get_paginator("describe_auto_scaling_groups").paginate(
                Filters=chunk, PaginationConfig={"PageSize": GROUP_PAGE}
            )
            templates = self.ec2.get_paginator("describe_launch_templates").paginate(
                Filters=chunk, PaginationConfig={"PageSize": TEMPLATE_PAGE}
            )
            with translate():
                found.extend(
                    ("group", g) for page in groups for g in page["AutoScalingGroups"] if _alive(g)
                )
                found.extend(("template", t) for page in templates for t in page["LaunchTemplates"])
        return found

    def groups_by_name(self, names: Sequence[str]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        paginator = self.autoscaling.get_paginator("describe_auto_scaling_groups")
        for start in range(0, len(names), GROUP_PAGE):
            chunk = list(names[start : start + GROUP_PAGE])
            pages = paginator.paginate(
                AutoScalingGroupNames=chunk, PaginationConfig={"PageSize": GROUP_PAGE}
            )
            with translate():
                found.extend(g for page in pages for g in page["AutoScalingGroups"] if _alive(g))
        return found

    # -- templates -----------------------------------------------------------------------------

    def templates_by_tag(self, lineage: str) -> dict[str, dict[str, Any]]:
        pages = self.ec2.get_paginator("describe_launch_templates").paginate(
            Filters=[{"Name": f"tag:{TAG_LINEAGE}", "Values": [lineage]}],
            PaginationConfig={"PageSize": TEMPLATE_PAGE},
        )
        with translate():
            return {t["LaunchTemplateId"]: t for page in pages for t in page["LaunchTemplates"]}

    def templates_by_id(self, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """These templates; the API fails a whole batch for one missing id, so then one by one."""
        if not ids:
            return {}
        try:
            return self._templates(list(ids))
        except ProviderError as error:
            _unless_not_found(error)
            if len(ids) == 1:
                return {}
        found: dict[str, dict[str, Any]] = {}
        for template_id in ids:
            try:
                found.update(self._templates([template_id]))
            except ProviderError as error:
                _unless_not_found(error)
        return found

    def _templates(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        with translate():
            response = self.ec2.describe_launch_templates(LaunchTemplateIds=ids)
        return {t["LaunchTemplateId"]: t for t in response["LaunchTemplates"]}

    # -- versions ------------------------------------------------------------------------------

    def latest_versions(self, ids: set[str], *, sweep: bool) -> dict[str, Version]:
        """The latest version of each of these templates (the ones that still exist)."""
        if not ids:
            return {}
        if not sweep and len(ids) <= PER_TEMPLATE_READS:
            found = (self.version(i, "$Latest") for i in sorted(ids))
            return {v.template_id: v for v in found if v is not None}
        pages = self.ec2.get_paginator("describe_launch_template_versions").paginate(
            Versions=["$Latest"], PaginationConfig={"PageSize": TEMPLATE_PAGE}
        )
        with translate():
            items = [v for page in pages for v in page["LaunchTemplateVersions"]]
        return {v.template_id: v for v in map(_version, items) if v.template_id in ids}

    def version(self, template_id: str, number: str) -> Version | None:
        try:
            with translate():
                response = self.ec2.describe_launch_template_versions(
                    LaunchTemplateId=template_id, Versions=[number]
                )
        except ProviderError as error:
            _unless_not_found(error)
            return None
        items = response["LaunchTemplateVersions"]
        return _version(items[0]) if items else None

    def resolve(
        self,
        group: Mapping[str, Any],
        latest: Mapping[str, Version],
        templates: Mapping[str, Mapping[str, Any]],
    ) -> Version | None:
        """The version a group launches from: the latest unless pinned to another by hand."""
        template_id, wanted = group_template(group)
        if template_id is None:
            return None
        newest = latest.get(template_id)
        if newest is not None:
            if wanted == "$Latest":
                return newest
            if wanted == "$Default" and template_id in templates:
                wanted = str(templates[template_id].get("DefaultVersionNumber"))
            if wanted == str(newest.number):
                return newest
        # Pinned by hand to another version, or a template not fetched yet: one more call.
        return self.version(template_id, wanted)


def _alive(group: Mapping[str, Any]) -> bool:
    """A group being deleted (ForceDelete terminates its instances) no longer counts."""
    return group.get("Status") != "Delete in progress"


def _unless_not_found(error: ProviderError) -> None:
    """A resource that is gone is simply absent from a read; any other error stands."""
    if error.kind is not ErrorKind.NOT_FOUND:
        raise error


def assemble(
    reader: Reader,
    groups: Sequence[Mapping[str, Any]],
    templates: Mapping[str, Mapping[str, Any]],
    latest: Mapping[str, Version],
    loose: Iterable[str],
) -> list[Observed]:
    """Groups with their templates, then the given templates that have no group."""
    result = [observe_group(g, reader.resolve(g, latest, templates)) for g in groups]
    result.extend(observe_template(templates[t], latest.get(t)) for t in loose if t in templates)
    return result
