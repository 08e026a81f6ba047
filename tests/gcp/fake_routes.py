"""The Compute REST routes the local endpoint serves: one handler per REST method, each
registered with `@route(VERB, PATH, METHOD)`; the handlers change the FakeCloud state."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from providers.gcp.labels import label_problem
from tests.gcp.fake_cloud import API, FakeCloud, HttpFault, Json, matches, page, public

Handler = Callable[[FakeCloud, dict[str, str], dict[str, str], Json], Json]
ROUTES: list[tuple[str, re.Pattern[str], str, Handler]] = []
_BASE = r"/compute/v1/projects/(?P<project>[^/]+)"


def route(verb: str, path: str, method: str) -> Callable[[Handler], Handler]:
    def register(handler: Handler) -> Handler:
        ROUTES.append((verb, re.compile(_BASE + path + "$"), method, handler))
        return handler

    return register


def _listing(items: list[Json], query: dict[str, str], kind: str) -> Json:
    chosen = [public(i) for i in items if matches(i, query.get("filter"))]
    chosen.sort(key=lambda i: i["name"])
    items_page, token = page(chosen, query)
    result: Json = {"kind": kind, "items": items_page}
    if token:
        result["nextPageToken"] = token
    return result


def _get(store: dict[str, Json], name: str, what: str) -> Json:
    if name not in store:
        raise HttpFault(404, "notFound", f"The resource '{what}/{name}' was not found")
    return store[name]


# -- instance templates ------------------------------------------------------------------------

T = "/global/instanceTemplates"


@route("POST", T, "instanceTemplates.insert")
def insert_template(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    name = body["name"]
    if name in cloud.templates:
        raise HttpFault(
            409, "alreadyExists", f"The resource 'instanceTemplates/{name}' already exists"
        )
    for key, value in ((body.get("properties") or {}).get("labels") or {}).items():
        if label_problem(key, key=True) or label_problem(str(value), key=False):
            raise HttpFault(  # GCE's words for a label outside its rules
                400,
                "invalid",
                "Invalid value for field 'resource.properties.labels': "
                f"'{key}'. Label key or value violates format constraints.",
            )
    resource = cloud._resource(name, "global/instanceTemplates", body)

    def apply() -> None:
        cloud.templates[name] = resource

    return cloud.operation("instanceTemplates.insert", resource["selfLink"], apply)


@route("GET", T + "/(?P<name>[^/]+)", "instanceTemplates.get")
def get_template(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    return public(_get(cloud.templates, p["name"], "instanceTemplates"))


@route("GET", T, "instanceTemplates.list")
def list_templates(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    return _listing(list(cloud.templates.values()), q, "compute#instanceTemplateList")


@route("DELETE", T + "/(?P<name>[^/]+)", "instanceTemplates.delete")
def delete_template(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    template = _get(cloud.templates, p["name"], "instanceTemplates")
    users = [g["name"] for g in cloud.groups.values() if cloud.template_of(g) == p["name"]]
    if users:
        raise HttpFault(400, "resourceInUseByAnotherResource",
                        f"The instance_template resource '{p['name']}' is already being used by "
                        f"'instanceGroupManagers/{users[0]}'")  # fmt: skip
    return cloud.operation(
        "instanceTemplates.delete", template["selfLink"], lambda: cloud.templates.pop(p["name"])
    )


# -- regional instance group managers ----------------------------------------------------------

G = "/regions/(?P<region>[^/]+)/instanceGroupManagers"


@route("POST", G, "regionInstanceGroupManagers.insert")
def insert_group(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    name = body["name"]
    if name in cloud.groups:
        raise HttpFault(
            409, "alreadyExists", f"The resource 'instanceGroupManagers/{name}' already exists"
        )
    _get(cloud.templates, body["instanceTemplate"].rsplit("/", 1)[-1], "instanceTemplates")
    region = p["region"]
    group = cloud._resource(name, f"regions/{region}/instanceGroupManagers", body)
    group["region"] = f"{API}/projects/{cloud.project}/regions/{region}"
    if not (body.get("distributionPolicy") or {}).get("zones"):  # GCE picks the region's zones
        group["distributionPolicy"] = {"zones": [
            {"zone": f"{API}/projects/{cloud.project}/zones/{region}-{z}"} for z in "abc"]}  # fmt: skip
    group.setdefault("versions", [{"instanceTemplate": body["instanceTemplate"]}])
    group.setdefault("updatePolicy", {"type": "OPPORTUNISTIC"})

    def apply() -> None:
        cloud.groups[name] = group
        cloud._fit(group)

    return cloud.operation("regionInstanceGroupManagers.insert", group["selfLink"], apply, region)


@route("GET", G + "/(?P<name>[^/]+)", "regionInstanceGroupManagers.get")
def get_group(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    group = _get(cloud.groups, p["name"], "instanceGroupManagers")
    cloud.advance(group)  # time passes while the caller polls
    return cloud.view(group)


@route("GET", G, "regionInstanceGroupManagers.list")
def list_groups(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    views = [cloud.view(g) for g in cloud.groups.values()]
    return _listing(views, q, "compute#regionInstanceGroupManagerList")


@route("PATCH", G + "/(?P<name>[^/]+)", "regionInstanceGroupManagers.patch")
def patch_group(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    group = _get(cloud.groups, p["name"], "instanceGroupManagers")

    def apply() -> None:
        group.update(
            {k: v for k, v in body.items() if k in ("versions", "updatePolicy", "targetSize")}
        )
        if "versions" in body:
            group["instanceTemplate"] = body["versions"][0]["instanceTemplate"]
            policy = group.get("updatePolicy") or {}
            if policy.get("type") == "PROACTIVE":
                steps = [
                    int((policy.get(k) or {}).get("fixed") or 0)
                    for k in ("maxSurge", "maxUnavailable")
                ]
                group["_rolling"] = {"batch": max(1, *steps)}
        cloud._fit(group)

    return cloud.operation(
        "regionInstanceGroupManagers.patch", group["selfLink"], apply, p["region"]
    )


@route("POST", G + "/(?P<name>[^/]+)/resize", "regionInstanceGroupManagers.resize")
def resize_group(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    group = _get(cloud.groups, p["name"], "instanceGroupManagers")

    def apply() -> None:
        group["targetSize"] = int(q["size"])
        cloud._fit(group)

    return cloud.operation(
        "regionInstanceGroupManagers.resize", group["selfLink"], apply, p["region"]
    )


@route("DELETE", G + "/(?P<name>[^/]+)", "regionInstanceGroupManagers.delete")
def delete_group(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    group = _get(cloud.groups, p["name"], "instanceGroupManagers")
    if p["name"] in cloud.autoscalers:
        raise HttpFault(400, "resourceInUseByAnotherResource",
                        f"The instance group manager is used by autoscaler '{p['name']}'")  # fmt: skip

    def apply() -> None:
        cloud.hand_delete_group(p["name"])

    return cloud.operation(
        "regionInstanceGroupManagers.delete", group["selfLink"], apply, p["region"]
    )


@route("GET", G + "/(?P<name>[^/]+)/listErrors", "regionInstanceGroupManagers.listErrors")
def list_errors(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    _get(cloud.groups, p["name"], "instanceGroupManagers")
    items, token = page(cloud.errors.get(p["name"], []), q)
    return {"items": items, **({"nextPageToken": token} if token else {})}


# -- regional autoscalers ----------------------------------------------------------------------

A = "/regions/(?P<region>[^/]+)/autoscalers"


@route("POST", A, "regionAutoscalers.insert")
def insert_autoscaler(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    name = body["name"]
    if name in cloud.autoscalers:
        raise HttpFault(409, "alreadyExists", f"The resource 'autoscalers/{name}' already exists")
    _get(cloud.groups, body["target"].rsplit("/", 1)[-1], "instanceGroupManagers")
    resource = cloud._resource(name, f"regions/{p['region']}/autoscalers", body, status="ACTIVE")

    def apply() -> None:
        cloud.autoscalers[name] = resource

    return cloud.operation("regionAutoscalers.insert", resource["selfLink"], apply, p["region"])


@route("PATCH", A, "regionAutoscalers.patch")
def patch_autoscaler(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    autoscaler = _get(cloud.autoscalers, q.get("autoscaler", ""), "autoscalers")

    def apply() -> None:
        autoscaler["autoscalingPolicy"].update(body.get("autoscalingPolicy") or {})

    return cloud.operation("regionAutoscalers.patch", autoscaler["selfLink"], apply, p["region"])


@route("GET", A + "/(?P<name>[^/]+)", "regionAutoscalers.get")
def get_autoscaler(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    return public(_get(cloud.autoscalers, p["name"], "autoscalers"))


@route("GET", A, "regionAutoscalers.list")
def list_autoscalers(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    return _listing(list(cloud.autoscalers.values()), q, "compute#regionAutoscalerList")


@route("DELETE", A + "/(?P<name>[^/]+)", "regionAutoscalers.delete")
def delete_autoscaler(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    autoscaler = _get(cloud.autoscalers, p["name"], "autoscalers")
    return cloud.operation(
        "regionAutoscalers.delete",
        autoscaler["selfLink"],
        lambda: cloud.autoscalers.pop(p["name"]),
        p["region"],
    )


# -- instances and operations ------------------------------------------------------------------


@route("GET", "/aggregated/instances", "instances.aggregatedList")
def aggregated_instances(
    cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json
) -> Json:
    listing = _listing(list(cloud.instances.values()), q, "compute#instanceAggregatedList")
    scopes: dict[str, Json] = {}
    for instance in listing["items"]:
        zone = "zones/" + instance["zone"].rsplit("/", 1)[-1]
        scopes.setdefault(zone, {"instances": []})["instances"].append(instance)
    return {**listing, "items": scopes}


@route("GET", "/zones/(?P<zone>[^/]+)/instances", "instances.list")
def list_instances(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    here = [i for i in cloud.instances.values() if i["zone"].endswith("/" + p["zone"])]
    return _listing(here, q, "compute#instanceList")


@route(
    "POST", "/regions/(?P<region>[^/]+)/operations/(?P<name>[^/]+)/wait", "regionOperations.wait"
)
@route("POST", "/global/operations/(?P<name>[^/]+)/wait", "globalOperations.wait")
def wait_operation(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    operation = cloud.operations.get(p["name"])
    if cloud.long_poll and operation is not None and operation["_method"] in cloud.stuck:
        time.sleep(cloud.long_poll)  # held, as GCE holds a wait on a running operation
    return cloud.poll(p["name"])


@route("GET", "/regions/(?P<region>[^/]+)/operations/(?P<name>[^/]+)", "regionOperations.get")
@route("GET", "/global/operations/(?P<name>[^/]+)", "globalOperations.get")
def poll_operation(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    return cloud.poll(p["name"])
