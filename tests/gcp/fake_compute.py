"""A local Compute Engine endpoint: the REST calls poolform makes, served over plain HTTP.

    python -m tests.gcp.fake_compute --port 8089

then point poolform at it (no account, no credentials):

    POOLFORM_GCP_ENDPOINT=http://127.0.0.1:8089 poolform apply DIR

Serves: instanceTemplates insert/get/list/delete; regionInstanceGroupManagers insert/get/list/
patch/resize/delete/listErrors; regionAutoscalers insert/get/list/patch/delete; instances
aggregatedList/list; region and global operations get/wait. Every request is logged
(`cloud.log`); faults are queued per REST method (`cloud.fail`). The state is fake_cloud.py.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.gcp.fake_cloud import API, FakeCloud, HttpFault, Json, Request, matches, page, public

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
@route("GET", "/regions/(?P<region>[^/]+)/operations/(?P<name>[^/]+)", "regionOperations.get")
@route("POST", "/global/operations/(?P<name>[^/]+)/wait", "globalOperations.wait")
@route("GET", "/global/operations/(?P<name>[^/]+)", "globalOperations.get")
def poll_operation(cloud: FakeCloud, p: dict[str, str], q: dict[str, str], body: Json) -> Json:
    return cloud.poll(p["name"])


# -- the server --------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    cloud: FakeCloud  # set on the subclass each server makes
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms delayed ACK

    def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read cloud.log
        pass

    def _serve(self) -> None:
        url = urlsplit(self.path)
        query = dict(parse_qsl(url.query))
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        chosen = [
            (method, handler, found)
            for verb, pattern, method, handler in ROUTES
            if verb == self.command and (found := pattern.match(url.path))
        ]
        if not chosen:
            return self._reply(404, _error(HttpFault(404, "notFound", f"no route {url.path}")))
        method, handler, found = chosen[0]
        with self.cloud.lock:
            self.cloud.log.append(Request(method, self.command, url.path, query))
            fault = self.cloud.take_http_fault(method)
            try:
                if fault is not None:
                    raise fault
                result = handler(self.cloud, found.groupdict(), query, json.loads(raw or b"{}"))
            except HttpFault as error:
                return self._reply(error.status, _error(error))
        self._reply(200, result)

    do_GET = do_POST = do_PATCH = do_DELETE = _serve

    def _reply(self, status: int, body: Json) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _error(fault: HttpFault) -> Json:
    status = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND", 409: "ALREADY_EXISTS",
              429: "RESOURCE_EXHAUSTED", 503: "UNAVAILABLE"}.get(fault.status, "UNKNOWN")  # fmt: skip
    message = fault.message or f"{fault.reason} (injected)"
    return {"error": {"code": fault.status, "message": message, "status": status,
                      "errors": [{"domain": "global", "reason": fault.reason, "message": message}]}}  # fmt: skip


class FakeComputeServer:
    """The endpoint on a thread: `url` for ClientOptions, `cloud` for the state and controls."""

    def __init__(self, port: int = 0, host: str = "127.0.0.1", cloud: FakeCloud | None = None):
        self.cloud = cloud or FakeCloud()
        handler = type("Handler", (_Handler,), {"cloud": self.cloud})
        self.server = ThreadingHTTPServer((host, port), handler)
        self.server.daemon_threads = True
        self.url = f"http://{host}:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def start(self) -> FakeComputeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A local Compute Engine endpoint for poolform.")
    parser.add_argument("--port", type=int, default=8089)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args(argv)
    server = FakeComputeServer(args.port, args.host)
    print(f"Compute endpoint at {server.url} (POOLFORM_GCP_ENDPOINT={server.url}); Ctrl-C stops")
    try:
        server.server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server.server_close()


if __name__ == "__main__":
    main()
