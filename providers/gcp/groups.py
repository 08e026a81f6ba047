"""A machine type's life in GCE: template + regional managed instance group + autoscaler.

- The group is always a regional MIG, across the declared zones (`distributionPolicy`) or, when
  none are declared, across the zones GCE picks. One kind of group means one list call for all
  groups and a location that never has to be recorded in the ids.
- The bounds [min_size, max_size] live in a regional autoscaler on the group, mode OFF: GCE
  reports them back and a person can change them in the console, but never moves the size
  itself; the scheduler does, with resize, inside the bounds. targetSize = the warm count.
- create waits until the group is stable; instance-creation errors GCE reports on the group
  (listErrors: a zone out of GPUs, quota) surface at once as CAPACITY errors.
- update sets the bounds and clamps targetSize into them, so a size the scheduler moved inside
  the bounds stays.
- replace makes a new template and patches the group's version with a PROACTIVE rolling update
  (maxSurge = batch, or maxUnavailable = batch when destroy_first; a regional group needs 0 or
  at least one per zone), waits until the new version is reached, then deletes the old template.
  Zones cannot change on an existing regional group, so a zone change makes a new group instead
  (named with the new token), sized like the old one, then deletes the old group (first, when
  destroy_first).
"""

from __future__ import annotations

import datetime as dt
import functools
import time
from collections.abc import Callable, Mapping
from typing import Any

from providers.protocol import (
    ErrorKind,
    Observed,
    ProviderError,
    ResourceSpec,
    RollingSpec,
    half_done,
)
from providers.shapes import Shape

from .compute import Compute, Json
from .errors import translate_instance_errors
from .names import describe, lineage_prefix, parse_description, resource_name
from .observe import assemble, current_template, group_zones, snapshot_names
from .settings import GcpSettings
from .template import template_body

_CLOCK_SLACK = dt.timedelta(seconds=5)  # GCE's clock and ours: errors just before "now" count


class Groups:
    def __init__(
        self,
        compute: Compute,
        settings: GcpSettings,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.compute = compute
        self.settings = settings
        self._sleep = sleep
        self._clock = clock

    # -- the protocol's group operations -------------------------------------------------------

    def create(self, spec: ResourceSpec, shape: Shape) -> Observed:
        since = _now()
        name = resource_name(spec.lineage, spec.address, spec.token)
        self.compute.insert_template(template_body(spec, shape, self.settings, name))
        self._insert_group(spec, shape, name, name, shape.desired)
        self._set_bounds(spec, name, shape)
        self.wait_stable(name, since)
        return self.observe(name)

    def resize(self, spec: ResourceSpec, shape: Shape, ids: Mapping[str, str]) -> Observed:
        since = _now()
        name = ids.get("group", "")
        group = self._group(spec, name)
        self._set_bounds(spec, name, shape)
        target = _clamp(int(group.get("targetSize") or 0), shape)
        if target != int(group.get("targetSize") or 0):
            self.compute.resize_group(name, target)
        self.wait_stable(name, since)
        return self.observe(name)

    def replace(
        self, spec: ResourceSpec, shape: Shape, ids: Mapping[str, str], rolling: RollingSpec
    ) -> Observed:
        since = _now()
        new = resource_name(spec.lineage, spec.address, spec.token)
        group = self.compute.get_group(ids["group"]) if ids.get("group") else None
        if group is None:  # deleted behind our back: make it afresh, as create would
            observed = self.create(spec, shape)
            self._delete_old_templates(spec, {ids.get("template", "")}, keep=new)
            return observed
        if _declared_zones(shape) != _zones_of(group):
            return self._move(spec, shape, group, ids, rolling, new)
        name = group["name"]
        self.compute.insert_template(template_body(spec, shape, self.settings, new))
        old = current_template(group)
        self._set_bounds(spec, name, shape)
        target = _clamp(int(group.get("targetSize") or 0), shape)
        if target != int(group.get("targetSize") or 0):
            self.compute.resize_group(name, target)
        if old != new:  # else an earlier attempt with this token already patched it
            step = max(1, rolling.batch_size, len(group_zones(group)))
            surge, unavailable = (0, step) if rolling.destroy_first else (step, 0)
            self.compute.patch_group(
                name,
                {
                    "versions": [{"name": new, "instanceTemplate": self.compute.template_url(new)}],
                    "updatePolicy": {
                        "type": "PROACTIVE",
                        "minimalAction": "REPLACE",
                        "maxSurge": {"fixed": surge},
                        "maxUnavailable": {"fixed": unavailable},
                    },
                },
            )
        self.wait_stable(name, since)
        self._delete_old_templates(spec, {old, ids.get("template", "")}, keep=new)
        return self.observe(name)

    def delete(self, address: str, ids: Mapping[str, str]) -> bool:
        """False when nothing with these ids existed."""
        found = False
        if ids.get("group"):
            found |= _gone_ok(lambda: self.compute.delete_autoscaler(ids["group"]))
            found |= _gone_ok(lambda: self.compute.delete_group(ids["group"]))
        if ids.get("template"):
            found |= _gone_ok(lambda: self.compute.delete_template(ids["template"]))
        return found

    def observe(self, name: str) -> Observed:
        observed = assemble(self.compute, snapshot_names(self.compute, [name], []), None)
        groups = [o for o in observed if o.provider_ids.get("group") == name]
        if not groups:
            raise ProviderError(ErrorKind.NOT_FOUND, f"group {name} vanished while being made")
        return groups[0]

    # -- steps ---------------------------------------------------------------------------------

    def _group(self, spec: ResourceSpec, name: str) -> Json:
        group = self.compute.get_group(name) if name else None
        if group is None:
            raise ProviderError(
                ErrorKind.NOT_FOUND, f"group {name or '(none recorded)'}: not found"
            )
        return group

    def _insert_group(
        self, spec: ResourceSpec, shape: Shape, name: str, template: str, size: int
    ) -> None:
        zones = _declared_zones(shape)
        body: Json = {
            "name": name,
            "description": describe(
                spec.tags(), type=spec.resource_type, zones="declared" if zones else "auto"
            ),
            "baseInstanceName": name,
            "instanceTemplate": self.compute.template_url(template),
            "targetSize": size,
        }
        if zones:
            body["distributionPolicy"] = {
                "zones": [{"zone": self.compute.zone_url(z)} for z in zones]
            }
        self.compute.insert_group(body)

    def _set_bounds(self, spec: ResourceSpec, name: str, shape: Shape) -> None:
        body: Json = {
            "name": name,
            "target": self.compute.group_url(name),
            "description": describe(spec.tags(), type=spec.resource_type),
            "autoscalingPolicy": {
                "mode": "OFF",  # bounds only: the scheduler moves the size, never GCE
                "minNumReplicas": shape.min_size,
                "maxNumReplicas": shape.max_size,
            },
        }
        current = self.compute.get_autoscaler(name)
        if current is None:  # first time, or deleted by hand: bounds come back
            self.compute.insert_autoscaler(body)
            return
        policy = current.get("autoscalingPolicy") or {}
        wanted = body["autoscalingPolicy"]
        if any(policy.get(k) != v for k, v in wanted.items()):
            self.compute.patch_autoscaler({"name": name, "autoscalingPolicy": wanted})

    def _move(
        self,
        spec: ResourceSpec,
        shape: Shape,
        old: Json,
        ids: Mapping[str, str],
        rolling: RollingSpec,
        new: str,
    ) -> Observed:
        since = _now()
        size = _clamp(int(old.get("targetSize") or 0), shape)
        old_template = current_template(old)
        if rolling.destroy_first:
            self.delete(spec.address, {"group": old["name"]})
        # A failure past the first step leaves the replacement half done: say which half, or
        # the cloud's words alone ("Quota exceeded") hide that a group is already gone or made.
        with half_done(
            f"the old group {old['name']} is deleted (destroy before create: its reservation "
            f"cannot hold both), making the new group {new} failed"
            if rolling.destroy_first
            else f"making the new group {new} failed (the old group {old['name']} stays)"
        ):
            self.compute.insert_template(template_body(spec, shape, self.settings, new))
            self._insert_group(spec, shape, new, new, size)
            self._set_bounds(spec, new, shape)
            self.wait_stable(new, since)
        if not rolling.destroy_first:
            with half_done(
                f"the new group {new} is made, deleting the old group {old['name']} failed"
            ):
                self.delete(spec.address, {"group": old["name"]})
        self._delete_old_templates(spec, {old_template, ids.get("template", "")}, keep=new)
        return self.observe(new)

    def _delete_old_templates(self, spec: ResourceSpec, names: set[str], keep: str) -> None:
        """Only poolform's own templates of this lineage: a template a person swapped in by
        hand is theirs to delete."""
        prefix = lineage_prefix(spec.lineage)
        for name in sorted(n for n in names if n and n != keep and n.startswith(prefix)):
            _gone_ok(functools.partial(self.compute.delete_template, name))

    def wait_stable(self, name: str, since: dt.datetime) -> None:
        deadline = self._clock() + self.settings.operation_timeout
        while True:
            group = self.compute.get_group(name)
            if group is None:
                raise ProviderError(ErrorKind.NOT_FOUND, f"group {name}: deleted while changing")
            status = group.get("status") or {}
            reached = (status.get("versionTarget") or {}).get("isReached", True)
            if status.get("isStable") and reached:
                return
            errors = [e for e in self.compute.group_errors(name) if _after(e, since)]
            if errors:
                raise translate_instance_errors(name, errors)
            if self._clock() >= deadline:
                raise ProviderError(
                    ErrorKind.RETRYABLE,
                    f"group {name} not stable after {self.settings.operation_timeout:g}s "
                    f"(operation_timeout): targetSize {group.get('targetSize')}, current "
                    f"actions {group.get('currentActions') or {}}",
                )
            self._sleep(self.settings.poll_interval)


def _declared_zones(shape: Shape) -> list[str]:
    return [str(z) for z in (shape.template_config or {}).get("zones") or []]


def _zones_of(group: Json) -> list[str]:
    described = parse_description(group.get("description"))
    return [] if described.get("zones") == "auto" else group_zones(group)


def _clamp(size: int, shape: Shape) -> int:
    return min(max(size, shape.min_size), shape.max_size)


def _gone_ok(call: Callable[[], Any]) -> bool:
    """Run a delete; False when the resource was already gone."""
    try:
        call()
    except ProviderError as error:
        if error.kind is ErrorKind.NOT_FOUND:
            return False
        raise
    return True


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC) - _CLOCK_SLACK


def _after(error: Json, since: dt.datetime) -> bool:
    try:
        when = dt.datetime.fromisoformat(str(error.get("timestamp", "")))
    except ValueError:
        return True  # no readable time: assume it is about this change
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when >= since
