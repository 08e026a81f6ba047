"""AwsProvider: machine types and worker pools as EC2 launch templates + Auto Scaling groups.

A group resource (machine_type, worker_pool) is one launch template and one Auto Scaling group
launching from its `$Latest` version, bounded [min_size, max_size] with the warm count desired:

    create   create_launch_template (ClientToken = the intent token) and create_auto_scaling_group,
             both named from lineage + address + token (providers/aws/groups.py), so a retried or
             resumed create finds what the first attempt made instead of making a second pair
    update   update_auto_scaling_group: new bounds; the desired count is clamped into them and
             otherwise left where the scheduler put it
    replace  a new template version with the full LaunchTemplateData (none when the latest
             already matches, so a retry makes no second version), then a rolling instance
             refresh (providers/aws/rollout.py) when the group has instances to roll
    delete   delete_auto_scaling_group (ForceDelete: its instances go too), delete_launch_template

Everything carries poolform's tags: the template itself, its instances and volumes (the
template's TagSpecifications) and the group (tags propagated at launch). provider_ids are
{"group": <Auto Scaling group name>, "template": <launch template id>}. A change that launches
instances waits for them (capacity_timeout), so a launch the cloud refuses is reported as a
CAPACITY error with the cloud's message.

Control-plane resources (compute_config, resource_pool, subject_policy) are poolform's own
objects, not AWS resources: the state backend's control-plane store keeps them (so every runner
sharing the backend sees them; without one, the SQLite state in `state_dir` keeps them),
and list/read merge them in.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from providers.control_plane import StoredControlPlane
from providers.ownership import check_deletable, check_importable, is_ours
from providers.protocol import (
    TAG_ADDRESS,
    TAG_LINEAGE,
    TAG_TOKEN,
    ErrorKind,
    Observed,
    ProviderError,
    ResourceRef,
    ResourceSpec,
    RollingSpec,
    half_done,
)
from providers.shapes import CONTROL_PLANE_TYPES, Shape, shape_of

from .errors import Launch
from .groups import Groups, resource_name, untag
from .rollout import Waiter, preferences
from .settings import AwsClients, AwsSettings
from .template import (
    Defaults,
    TemplateRequest,
    machine_template,
    template_view,
    worker_template,
)
from .views import (
    Reader,
    Version,
    assemble,
    group_template,
    observe_group,
    resource_type_of,
    running_count,
    tags_of,
)

IDENTITY_TAGS = (TAG_LINEAGE, TAG_ADDRESS, TAG_TOKEN)


class AwsProvider:
    name = "aws"

    def __init__(
        self,
        settings: Mapping[str, Any] | None = None,
        state_dir: Path | str = ".poolform",
        *,
        region: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        control: StoredControlPlane | None = None,
    ):
        self.settings = AwsSettings.parse(settings or {})
        self.clients = AwsClients(region, self.settings.max_attempts)
        self.api_calls = self.clients.api_calls
        self.reader = Reader(self.clients)
        self.groups = Groups(self.clients, self.settings.subnet_ids)
        self.waiter = Waiter(
            self.clients.autoscaling,
            capacity_timeout=self.settings.capacity_timeout,
            refresh_timeout=self.settings.instance_refresh_timeout,
            poll_interval=self.settings.poll_interval,
            sleep=sleep,
            clock=clock,
        )
        self.control = control or StoredControlPlane.beside(Path(state_dir))

    # -- reading -------------------------------------------------------------------------------

    def list(self, lineage: str) -> list[Observed]:
        groups = self.reader.groups_by_tag(lineage)
        templates = self.reader.templates_by_tag(lineage)
        used = {template_id for g in groups if (template_id := group_template(g)[0])}
        latest = self.reader.latest_versions(set(templates) | used, sweep=True)
        loose = [t for t in templates if t not in used]
        observed = assemble(self.reader, groups, templates, latest, loose)
        observed += [
            o for o in self.control.list(lineage) if o.resource_type in CONTROL_PLANE_TYPES
        ]
        return _sorted(observed)

    def list_at(self, addresses: Sequence[str]) -> builtins.list[Observed]:
        found = [
            Observed(
                tags.get(TAG_ADDRESS, ""),
                resource_type_of(tags.get(TAG_ADDRESS, "")),
                {kind: str(item.get("AutoScalingGroupName") or item.get("LaunchTemplateId"))},
                {},
                tags,
            )
            for kind, item in self.reader.tagged_at(addresses)
            if (tags := tags_of(item.get("Tags")))
        ]
        return _sorted(found)

    def read(self, refs: Sequence[ResourceRef]) -> builtins.list[Observed]:
        control = [r for r in refs if r.resource_type in CONTROL_PLANE_TYPES]
        cloud = [r.provider_ids for r in refs if r.resource_type not in CONTROL_PLANE_TYPES]
        names = [ids["group"] for ids in cloud if "group" in ids]
        loose = [ids["template"] for ids in cloud if "template" in ids and "group" not in ids]
        groups = self.reader.groups_by_name(names)
        templates = self.reader.templates_by_id(loose)
        used = {template_id for g in groups if (template_id := group_template(g)[0])}
        latest = self.reader.latest_versions(used | set(templates), sweep=False)
        observed = assemble(self.reader, groups, templates, latest, loose)
        if control:
            observed += self.control.read(control)
        return _sorted(observed)

    # -- changing ------------------------------------------------------------------------------

    def create(self, spec: ResourceSpec) -> Observed:
        if spec.resource_type in CONTROL_PLANE_TYPES:
            return self.control.create(spec)
        shape, request = self._request(spec, spec.tags())
        name = resource_name(spec.lineage, spec.address, spec.token)
        placement = self.groups.placement(request, spec.address)
        defaults = Defaults(request.defaulted_image)
        since = self.waiter.now()
        template_id, number, earlier = self.groups.create_template(
            name, request, defaults, spec.tags(), spec.token, spec.address
        )
        # A template made by an earlier attempt may have its group already, or not yet.
        if not earlier or self.groups.find(name, spec.address) is None:
            bounds = (shape.min_size, shape.max_size, shape.desired)
            self.groups.create_group(
                name, template_id, bounds, placement, spec.tags(), spec.address, request.launch
            )
        group = self.waiter.capacity(name, shape.desired, since, spec.address, request.launch)
        return observe_group(group, Version(template_id, number, request.data, defaults))

    def update(self, spec: ResourceSpec, ids: Mapping[str, str]) -> Observed:
        if spec.resource_type in CONTROL_PLANE_TYPES:
            return self.control.update(spec, ids)
        shape = shape_of(spec, catalog_only=False)
        launch = Launch(shape.instance_type, shape.market)
        group = self._group(spec.address, ids)
        since = self.waiter.now()
        want = self.groups.resize(group, shape.min_size, shape.max_size, spec.address, launch)
        name = str(group["AutoScalingGroupName"])
        group = self.waiter.capacity(name, want, since, spec.address, launch)
        return observe_group(group, self.reader.resolve(group, {}, {}))

    def replace(self, spec: ResourceSpec, ids: Mapping[str, str], rolling: RollingSpec) -> Observed:
        if spec.resource_type in CONTROL_PLANE_TYPES:
            return self.control.replace(spec, ids, rolling)
        try:
            group = self._group(spec.address, ids)
        except ProviderError as error:
            if error.kind is not ErrorKind.NOT_FOUND:
                raise
            return self._recreate(spec, ids)
        # The group keeps the identity it was created with (its token tag included).
        tags = {k: v for k, v in tags_of(group.get("Tags")).items() if k in IDENTITY_TAGS}
        shape, request = self._request(spec, tags or spec.tags())
        zones, chosen = self.groups.placement(request, spec.address)
        defaults = Defaults(request.defaulted_image)
        template_id = ids.get("template") or group_template(group)[0]
        latest = self.reader.version(template_id, "$Latest") if template_id else None
        if latest is None:  # the template was deleted by hand: a new one
            name = resource_name(spec.lineage, spec.address, spec.token)
            template_id, number, _ = self.groups.create_template(
                name, request, defaults, tags or spec.tags(), spec.token, spec.address
            )
        elif _same(spec.resource_type, latest, request, defaults):
            number = latest.number  # a retried replace: the version is there already
        else:
            number = self.groups.new_version(latest.template_id, request, defaults, spec.address)
        assert template_id is not None
        since = self.waiter.now()
        name = str(group["AutoScalingGroupName"])
        want = self.groups.resize(
            group,
            shape.min_size,
            shape.max_size,
            spec.address,
            request.launch,
            LaunchTemplate={"LaunchTemplateId": template_id, "Version": "$Latest"},
            **self.groups.where(zones),
        )
        # From here the group launches from the new version; its running instances may not.
        with half_done(
            f"group {name} launches from template {template_id} version {number} now; "
            "moving its instances over failed"
        ):
            self.groups.retag_zones(group, chosen, spec.address)
            if group.get("Instances"):  # nothing to roll in an empty group
                capacity = max(int(group["DesiredCapacity"]), running_count(group))
                prefs = preferences(rolling, capacity, self.settings.instance_warmup)
                self.waiter.refresh(name, prefs, spec.address, request.launch)
            group = self.waiter.capacity(name, want, since, spec.address, request.launch)
        return observe_group(group, Version(template_id, number, request.data, defaults))

    def delete(
        self, address: str, resource_type: str, ids: Mapping[str, str], *, lineage: str
    ) -> None:
        if resource_type in CONTROL_PLANE_TYPES:
            self.control.delete(address, resource_type, ids, lineage=lineage)
            return
        group = self.groups.find(ids["group"], address) if ids.get("group") else None
        template_id = ids.get("template")
        template = (
            self.reader.templates_by_id([template_id]).get(template_id) if template_id else None
        )
        # The resource is its group's (with none left, its template's): whose it is decides.
        if group is not None:
            check_deletable(
                address, f"group {ids['group']}", tags=tags_of(group.get("Tags")), lineage=lineage
            )
        elif template is not None:
            check_deletable(
                address, f"launch template {template_id}", tags=tags_of(template.get("Tags")),
                lineage=lineage,
            )  # fmt: skip
        existed = False
        if group is not None:
            existed |= _unless_gone(lambda: self.groups.delete_group(ids["group"], address))
        # A template a person swapped in, recorded since, is theirs: only ours is deleted.
        mine = template is not None and is_ours(
            tags_of(template.get("Tags")), lineage=lineage, address=address
        )
        if template_id and mine:
            existed |= _unless_gone(lambda: self.groups.delete_template(template_id, address))
        if not existed:
            shown = ", ".join(f"{k} {v}" for k, v in sorted(ids.items())) or "no recorded ids"
            raise ProviderError(ErrorKind.NOT_FOUND, f"{shown}: not found", address=address)

    def import_resource(
        self, address: str, resource_type: str, provider_id: str, tags: Mapping[str, str]
    ) -> Observed:
        if resource_type in CONTROL_PLANE_TYPES:
            return self.control.import_resource(address, resource_type, provider_id, tags)
        group = self._group(address, {"group": provider_id})
        own = tags_of(group.get("Tags"))
        named = own.get(TAG_ADDRESS)
        check_importable(
            address, resource_type, provider_id,
            actual_type=resource_type_of(named) if named else None,
            tags=own, lineage=tags.get(TAG_LINEAGE, ""),
        )  # fmt: skip
        template_id = group_template(group)[0]
        if template_id is None:
            raise ProviderError(
                ErrorKind.PERMANENT,
                f"group {provider_id} launches from a launch configuration; poolform manages "
                "groups with a launch template (migrate it first)",
                address=address,
            )
        self.groups.tag(group, template_id, tags, address)
        ref = ResourceRef(address, resource_type, {"group": provider_id, "template": template_id})
        return self.read([ref])[0]

    def forget(self, address: str, resource_type: str, ids: Mapping[str, str]) -> None:
        if resource_type in CONTROL_PLANE_TYPES:
            self.control.forget(address, resource_type, ids)
            return
        group = self.groups.find(ids["group"], address) if ids.get("group") else None
        template_id = ids.get("template") or (group_template(group)[0] if group else None)
        if template_id and not self.reader.templates_by_id([template_id]):
            template_id = None
        if group is None and template_id is None:
            raise ProviderError(ErrorKind.NOT_FOUND, "not found", address=address)
        untag(self.clients.autoscaling, self.clients.ec2, group, template_id, address)

    def close(self) -> None:
        self.clients.close()
        self.control.close()

    # -- helpers -------------------------------------------------------------------------------

    def _request(
        self, spec: ResourceSpec, tags: Mapping[str, str]
    ) -> tuple[Shape, TemplateRequest]:
        shape = shape_of(spec, catalog_only=False)
        build = machine_template if spec.resource_type == "machine_type" else worker_template
        return shape, build(spec.address, shape, self.settings.image_id, tags)

    def _group(self, address: str, ids: Mapping[str, str]) -> dict[str, Any]:
        name = ids.get("group")
        group = self.groups.find(name, address) if name else None
        if group is None:
            shown = f"group {name}" if name else "no recorded group"
            raise ProviderError(ErrorKind.NOT_FOUND, f"{shown}: not found", address=address)
        return group

    def _recreate(self, spec: ResourceSpec, ids: Mapping[str, str]) -> Observed:
        """The group is gone: a fresh pair named by this replace's token, the old template
        (if it survived) removed."""
        observed = self.create(spec)
        old = ids.get("template")
        if old and old != observed.provider_ids.get("template"):
            _unless_gone(lambda: self.groups.delete_template(old, spec.address))
        return observed


def _same(
    resource_type: str, latest: Version, request: TemplateRequest, defaults: Defaults
) -> bool:
    """Whether the latest version already is what this replace would write."""
    return (
        latest.defaults == defaults
        and latest.data.get("ImageId") == request.data.get("ImageId")
        and template_view(resource_type, latest.data, latest.defaults)
        == template_view(resource_type, request.data, defaults)
    )


def _unless_gone(call: Callable[[], None]) -> bool:
    """Run a delete; False when the thing was already gone."""
    try:
        call()
    except ProviderError as error:
        if error.kind is not ErrorKind.NOT_FOUND:
            raise
        return False
    return True


def _sorted(observed: builtins.list[Observed]) -> builtins.list[Observed]:
    return sorted(observed, key=lambda o: (o.address, sorted(o.provider_ids.items())))
