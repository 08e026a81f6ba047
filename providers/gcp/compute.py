"""The Compute REST calls poolform makes, one method each, as plain JSON dicts in and out.

Every call goes through the Boundary (counted under its REST method name, retried, translated)
and every mutation waits for its operation. Inserts take `conflict_ok`: names are
deterministic, so a 409 means an earlier attempt made the resource and it is read back instead.
Gets return None on 404 where the caller decides what a missing resource means.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from providers.protocol import ErrorKind, ProviderError

from . import sdk
from .clients import Clients, OperationWaiter
from .errors import Boundary
from .settings import GcpSettings

Json = dict[str, Any]

if TYPE_CHECKING:
    from google.cloud import compute_v1
else:
    compute_v1 = sdk.compute_v1()  # only the services poolform calls (sdk.py)


def as_json(message: Any) -> Json:
    result: Json = type(message).to_dict(message, preserving_proto_field_name=False)
    return result


class Compute:
    def __init__(
        self, clients: Clients, boundary: Boundary, waiter: OperationWaiter, settings: GcpSettings
    ):
        self.c = clients
        self.boundary = boundary
        self.waiter = waiter
        self.project = settings.project
        self.region = settings.region
        self.page_size = settings.page_size

    # -- helpers -------------------------------------------------------------------------------

    def _mutate(self, method: str, send: Callable[[], Any], *, conflict_ok: bool = False) -> bool:
        """Send a mutation and wait for it; False when it was a tolerated 409."""
        operation = self.boundary.call(method, send, conflict_ok=conflict_ok)
        self.waiter.wait(operation)
        return operation is not None

    def _get(self, method: str, send: Callable[[], Any]) -> Json | None:
        try:
            return as_json(self.boundary.must(method, send))
        except ProviderError as error:
            if error.kind is ErrorKind.NOT_FOUND:
                return None
            raise

    def _list(self, method: str, send: Callable[[], Any]) -> list[Json]:
        return [as_json(item) for item in self.boundary.pages(method, send)]

    def template_url(self, name: str) -> str:
        return f"projects/{self.project}/global/instanceTemplates/{name}"

    def group_url(self, name: str) -> str:
        return f"projects/{self.project}/regions/{self.region}/instanceGroupManagers/{name}"

    def zone_url(self, zone: str) -> str:
        return f"projects/{self.project}/zones/{zone}"

    # -- instance templates (global) -----------------------------------------------------------

    def insert_template(self, body: Json) -> bool:
        resource = compute_v1.InstanceTemplate.from_json(json.dumps(body))
        return self._mutate(
            "instanceTemplates.insert",
            lambda: self.c.templates.insert_unary(
                project=self.project, instance_template_resource=resource, retry=None
            ),
            conflict_ok=True,
        )

    def get_template(self, name: str) -> Json | None:
        return self._get(
            "instanceTemplates.get",
            lambda: self.c.templates.get(project=self.project, instance_template=name, retry=None),
        )

    def delete_template(self, name: str) -> None:
        self._mutate(
            "instanceTemplates.delete",
            lambda: self.c.templates.delete_unary(
                project=self.project, instance_template=name, retry=None
            ),
        )

    def list_templates(self, filter_: str) -> list[Json]:
        request = compute_v1.ListInstanceTemplatesRequest(
            project=self.project, filter=filter_, max_results=self.page_size
        )
        return self._list(
            "instanceTemplates.list", lambda: self.c.templates.list(request=request, retry=None)
        )

    # -- regional instance group managers ------------------------------------------------------

    def _where(self, name: str) -> Json:
        return {"project": self.project, "region": self.region, "instance_group_manager": name}

    def insert_group(self, body: Json) -> bool:
        resource = compute_v1.InstanceGroupManager.from_json(json.dumps(body))
        return self._mutate(
            "regionInstanceGroupManagers.insert",
            lambda: self.c.groups.insert_unary(
                project=self.project,
                region=self.region,
                instance_group_manager_resource=resource,
                retry=None,
            ),
            conflict_ok=True,
        )

    def get_group(self, name: str) -> Json | None:
        return self._get(
            "regionInstanceGroupManagers.get",
            lambda: self.c.groups.get(**self._where(name), retry=None),
        )

    def patch_group(self, name: str, patch: Json) -> None:
        resource = compute_v1.InstanceGroupManager.from_json(json.dumps(patch))
        self._mutate(
            "regionInstanceGroupManagers.patch",
            lambda: self.c.groups.patch_unary(
                **self._where(name), instance_group_manager_resource=resource, retry=None
            ),
        )

    def resize_group(self, name: str, size: int) -> None:
        self._mutate(
            "regionInstanceGroupManagers.resize",
            lambda: self.c.groups.resize_unary(**self._where(name), size=size, retry=None),
        )

    def delete_group(self, name: str) -> None:
        self._mutate(
            "regionInstanceGroupManagers.delete",
            lambda: self.c.groups.delete_unary(**self._where(name), retry=None),
        )

    def group_errors(self, name: str) -> list[Json]:
        request = compute_v1.ListErrorsRegionInstanceGroupManagersRequest(
            **self._where(name), max_results=self.page_size
        )
        return self._list(
            "regionInstanceGroupManagers.listErrors",
            lambda: self.c.groups.list_errors(request=request, retry=None),
        )

    def list_groups(self, filter_: str) -> list[Json]:
        request = compute_v1.ListRegionInstanceGroupManagersRequest(
            project=self.project, region=self.region, filter=filter_, max_results=self.page_size
        )
        return self._list(
            "regionInstanceGroupManagers.list",
            lambda: self.c.groups.list(request=request, retry=None),
        )

    # -- regional autoscalers (where a group's bounds live) ------------------------------------

    def insert_autoscaler(self, body: Json) -> bool:
        resource = compute_v1.Autoscaler.from_json(json.dumps(body))
        return self._mutate(
            "regionAutoscalers.insert",
            lambda: self.c.autoscalers.insert_unary(
                project=self.project, region=self.region, autoscaler_resource=resource, retry=None
            ),
            conflict_ok=True,
        )

    def patch_autoscaler(self, body: Json) -> None:
        request = compute_v1.PatchRegionAutoscalerRequest(
            project=self.project,
            region=self.region,
            autoscaler=body["name"],
            autoscaler_resource=compute_v1.Autoscaler.from_json(json.dumps(body)),
        )
        self._mutate(
            "regionAutoscalers.patch",
            lambda: self.c.autoscalers.patch_unary(request=request, retry=None),
        )

    def get_autoscaler(self, name: str) -> Json | None:
        return self._get(
            "regionAutoscalers.get",
            lambda: self.c.autoscalers.get(
                project=self.project, region=self.region, autoscaler=name, retry=None
            ),
        )

    def delete_autoscaler(self, name: str) -> None:
        self._mutate(
            "regionAutoscalers.delete",
            lambda: self.c.autoscalers.delete_unary(
                project=self.project, region=self.region, autoscaler=name, retry=None
            ),
        )

    def list_autoscalers(self, filter_: str) -> list[Json]:
        request = compute_v1.ListRegionAutoscalersRequest(
            project=self.project, region=self.region, filter=filter_, max_results=self.page_size
        )
        return self._list(
            "regionAutoscalers.list", lambda: self.c.autoscalers.list(request=request, retry=None)
        )

    # -- instances (made by the groups; only read) ---------------------------------------------

    def list_instances(self, filter_: str) -> list[Json]:
        """Every zone's instances matching the filter (name and status): one aggregated list,
        paged."""
        request = compute_v1.AggregatedListInstancesRequest(
            project=self.project,
            filter=filter_,
            max_results=self.page_size,
        )
        found = self.boundary.pages(
            "instances.aggregatedList",
            lambda: self.c.instances.aggregated_list(request=request, retry=None),
        )
        # only what refresh counts: converting every instance to a dict costs more than the call
        return [{"name": i.name, "status": i.status} for i in found]
