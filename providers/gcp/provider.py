"""GcpProvider: poolform's capacity on Google Compute Engine, through google-cloud-compute.

A machine type (and a worker pool) is an instance template plus a regional managed instance
group with a mode-OFF autoscaler holding its bounds (see groups.py, template.py, names.py).
Control-plane resources (compute configs, resource pools, subject policies) are poolform's own
objects, not GCE's: they live in the state backend's control-plane store (without one, in an
embedded local provider beside the state), and `list` / `read` merge both.

`api_calls` counts every request sent to GCE by REST method name (`instances.aggregatedList`,
`regionOperations.wait`, ...), retries included.
"""

from __future__ import annotations

import builtins
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from providers.catalog import CATALOG
from providers.control_plane import StoredControlPlane
from providers.ownership import check_deletable, check_importable, is_ours
from providers.protocol import (
    TAG_ADDRESS,
    TAG_LINEAGE,
    ErrorKind,
    Observed,
    ProviderError,
    ResourceRef,
    ResourceSpec,
    RollingSpec,
)
from providers.shapes import CONTROL_PLANE_TYPES, Shape, shape_of

from .clients import Clients, OperationWaiter
from .compute import Compute
from .errors import Boundary
from .groups import Groups
from .names import address_filter, label_filter, name_filter, parse_description, tags_of
from .observe import assemble, snapshot_lineage, snapshot_names
from .settings import GcpSettings


class GcpProvider:
    name = "gcp"

    def __init__(
        self,
        settings: Mapping[str, Any] | None = None,
        state_dir: Path | str = ".poolform",
        *,
        region: str | None = None,
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        control: StoredControlPlane | None = None,
        now: Callable[[], datetime] | None = None,
    ):
        environ = os.environ if environ is None else environ
        self.settings = GcpSettings.parse(settings or {}, region, environ)
        self.boundary = Boundary(self.settings.retries, sleep=sleep, now=now)
        self.clients = Clients(self.settings)
        waiter = OperationWaiter(self.clients, self.boundary, self.settings, sleep=sleep)
        self.compute = Compute(self.clients, self.boundary, waiter, self.settings)
        self.groups = Groups(self.compute, self.settings, sleep=sleep)
        self.control = control or StoredControlPlane.beside(Path(state_dir))

    @property
    def api_calls(self) -> Counter[str]:
        return self.boundary.api_calls

    # -- the protocol --------------------------------------------------------------------------

    def list(self, lineage: str) -> list[Observed]:
        with self.boundary.about(None):
            snap = snapshot_lineage(self.compute, name_filter(lineage), label_filter(lineage))
            found = assemble(self.compute, snap, lineage)
        forgotten = self.control.forgotten()  # groups cannot be re-tagged: `forget` notes them
        found = [o for o in found if not forgotten & set(o.provider_ids.values())]
        return _sorted(found + self.control.list(lineage))

    def list_at(self, addresses: Sequence[str]) -> builtins.list[Observed]:
        wanted = sorted(set(addresses))
        found: builtins.list[Observed] = []
        with self.boundary.about(None):
            for start in range(0, len(wanted), 50):  # names a filter's alternation holds
                where = address_filter(wanted[start : start + 50])
                for kind, items in (
                    ("group", self.compute.list_groups(where)),
                    ("template", self.compute.list_templates(where)),
                ):
                    for item in items:
                        tags = tags_of(parse_description(item.get("description")))
                        address = tags.get(TAG_ADDRESS, "")
                        if address in wanted:
                            shape = "worker_pool" if address.startswith("worker_pool.") else ""
                            ids = {kind: str(item["name"])}
                            found.append(Observed(address, shape or "machine_type", ids, {}, tags))
        forgotten = self.control.forgotten() if found else set()  # `state rm` let these go
        return _sorted([o for o in found if not forgotten & set(o.provider_ids.values())])

    def read(self, refs: Sequence[ResourceRef]) -> builtins.list[Observed]:
        control = [r for r in refs if r.resource_type in CONTROL_PLANE_TYPES]
        cloud = [r for r in refs if r.resource_type not in CONTROL_PLANE_TYPES]
        groups = [r.provider_ids["group"] for r in cloud if r.provider_ids.get("group")]
        templates = [r.provider_ids["template"] for r in cloud if r.provider_ids.get("template")]
        found: builtins.list[Observed] = []
        if groups or templates:
            with self.boundary.about(None):
                snap = snapshot_names(self.compute, groups, templates)
                asked = set(groups) | set(templates)
                found = [
                    o
                    for o in assemble(self.compute, snap, None)
                    if asked & set(o.provider_ids.values())
                ]
        return _sorted(found + (self.control.read(control) if control else []))

    def create(self, spec: ResourceSpec) -> Observed:
        if spec.resource_type in CONTROL_PLANE_TYPES:
            return self.control.create(spec)
        shape = self._shape(spec)
        with self.boundary.about(spec.address, spot=shape.market == "SPOT"):
            return self.groups.create(spec, shape)

    def update(self, spec: ResourceSpec, ids: Mapping[str, str]) -> Observed:
        if spec.resource_type in CONTROL_PLANE_TYPES:
            return self.control.update(spec, ids)
        shape = self._shape(spec)
        with self.boundary.about(spec.address, spot=shape.market == "SPOT"):
            return self.groups.resize(spec, shape, ids)

    def replace(self, spec: ResourceSpec, ids: Mapping[str, str], rolling: RollingSpec) -> Observed:
        if spec.resource_type in CONTROL_PLANE_TYPES:
            return self.control.replace(spec, ids, rolling)
        shape = self._shape(spec)
        with self.boundary.about(spec.address, spot=shape.market == "SPOT"):
            return self.groups.replace(spec, shape, ids, rolling)

    def delete(
        self, address: str, resource_type: str, ids: Mapping[str, str], *, lineage: str
    ) -> None:
        if resource_type in CONTROL_PLANE_TYPES:
            self.control.delete(address, resource_type, ids, lineage=lineage)
            return
        with self.boundary.about(address):
            group = self.compute.get_group(ids["group"]) if ids.get("group") else None
            template = self.compute.get_template(ids["template"]) if ids.get("template") else None
            # The resource is its group's (with none left, its template's): whose it is decides.
            # Labels and descriptions are fixed once made, so `state rm` notes what it let go.
            for kind, found in (("group", group), ("template", template)):
                if found is not None:
                    check_deletable(
                        address, f"{kind} {ids[kind]}", lineage=lineage,
                        tags=tags_of(parse_description(found.get("description"))),
                        forgotten=ids[kind] in self.control.forgotten(),
                    )  # fmt: skip
                    break
            doomed = dict(ids)
            # A template a person swapped in, recorded since, is theirs: only ours is deleted.
            if template is not None and not is_ours(
                tags_of(parse_description(template.get("description"))),
                lineage=lineage, address=address,
            ):  # fmt: skip
                doomed.pop("template")
            if not self.groups.delete(address, doomed):
                shown = ", ".join(f"{k} {v}" for k, v in sorted(ids.items())) or "no ids"
                raise ProviderError(ErrorKind.NOT_FOUND, f"{shown}: not found", address=address)

    def import_resource(
        self, address: str, resource_type: str, provider_id: str, tags: Mapping[str, str]
    ) -> Observed:
        if resource_type in CONTROL_PLANE_TYPES:
            return self.control.import_resource(address, resource_type, provider_id, tags)
        # A group's description is fixed at insert and its name is what list filters on, so a
        # group made outside poolform cannot be marked as this state's in place; one this state
        # made and `state rm` forgot can be taken back.
        ref = ResourceRef(address, resource_type, {"group": provider_id})
        mine = [o for o in self.read([ref]) if o.provider_ids.get("group") == provider_id]
        if mine and mine[0].tags.get(TAG_LINEAGE):
            check_importable(
                address, resource_type, provider_id, actual_type=mine[0].resource_type,
                tags=mine[0].tags, lineage=tags.get(TAG_LINEAGE, ""),
            )  # fmt: skip
            self.control.remember(mine[0].provider_ids)
            return mine[0]
        raise ProviderError(
            ErrorKind.PERMANENT,
            f"import of a GCP {resource_type} is not supported: poolform finds its groups by "
            "name and by the description set when they are made; let poolform create the "
            "group and delete the old one",
            address=address,
        )

    def forget(self, address: str, resource_type: str, ids: Mapping[str, str]) -> None:
        if resource_type in CONTROL_PLANE_TYPES:
            self.control.forget(address, resource_type, ids)
            return
        if not self.read([ResourceRef(address, resource_type, ids)]):
            raise ProviderError(ErrorKind.NOT_FOUND, "not found", address=address)
        # Labels and descriptions of templates and groups are fixed once made: remember instead.
        self.control.record_forgotten(address, ids)

    def close(self) -> None:
        self.clients.close()
        self.control.close()

    # -- shapes --------------------------------------------------------------------------------

    def _shape(self, spec: ResourceSpec) -> Shape:
        shape = shape_of(spec, catalog_only=False)
        if spec.resource_type == "worker_pool":
            _check_worker_pool(spec, shape)
        return shape


def _check_worker_pool(spec: ResourceSpec, shape: Shape) -> None:
    """What a GCE group can do for a SkyPilot-style worker pool: run `setup` (with `envs`) as
    the startup script of identical VMs. Secrets would land in instance metadata, readable by
    anyone who can read the project's templates, and files have no place to come from."""

    def refuse(message: str) -> ProviderError:
        return ProviderError(ErrorKind.PERMANENT, message, address=spec.address)

    if spec.attributes.get("secrets"):
        raise refuse(
            "a GCP worker pool cannot take `secrets`: they would be stored in plain text in "
            "the instance template's metadata; use Secret Manager from `setup` instead"
        )
    for key in ("workdir", "file_mounts"):
        if spec.attributes.get(key):
            raise refuse(f"a GCP worker pool cannot take `{key}`: there is nowhere to copy from")
    known = CATALOG.get(shape.instance_type)
    if known is not None and known.provider != "gcp":
        raise refuse(
            f"the worker pool's resources resolve to {shape.instance_type}, not a GCE machine "
            "type: name one in `resources.instance_type` (e.g. n2-standard-4)"
        )


def _sorted(items: list[Observed]) -> list[Observed]:
    return sorted(items, key=lambda o: (o.address, sorted(o.provider_ids.items())))
