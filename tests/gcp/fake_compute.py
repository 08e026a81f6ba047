"""A local Compute Engine endpoint: the REST calls poolform makes, served over plain HTTP.

    python -m tests.gcp.fake_compute --port 8089

then point poolform at it (no account, no credentials):

    POOLFORM_GCP_ENDPOINT=http://127.0.0.1:8089 poolform apply DIR

Serves: instanceTemplates insert/get/list/delete; regionInstanceGroupManagers insert/get/list/
patch/resize/delete/listErrors; regionAutoscalers insert/get/list/patch/delete; instances
aggregatedList/list; region and global operations get/wait. Every request is logged
(`cloud.log`); faults are queued per REST method (`cloud.fail`). The routes are
fake_routes.py, the state fake_cloud.py.

Changes behind poolform's back (for `poolform drift`), as someone with the console would make
them: `GET /fake/groups`, then `POST /fake/hand/ACTION` with JSON arguments, ACTION one of
resize {group, size}, set-bounds {group, low, high}, set-template {group, properties, name},
delete-group {group}.
"""

from __future__ import annotations

import argparse
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.gcp.fake_cloud import FakeCloud, HttpFault, Json, Request
from tests.gcp.fake_routes import ROUTES

# -- changes behind poolform's back, for a demo against a running endpoint ---------------------

HAND = {
    "resize": FakeCloud.hand_resize,
    "set-bounds": FakeCloud.hand_set_bounds,
    "set-template": FakeCloud.hand_set_template,
    "delete-group": FakeCloud.hand_delete_group,
}


def hand_change(cloud: FakeCloud, action: str, body: Json) -> Json:
    """POST /fake/hand/ACTION with the helper's arguments as JSON, e.g.
    curl -X POST localhost:8089/fake/hand/set-bounds -d '{"group": "pf-...", "low": 0, "high": 9}'
    GET /fake/groups lists the groups (name, address, targetSize, template)."""
    if action not in HAND:
        raise HttpFault(404, "notFound", f"no hand change {action!r}; known: {', '.join(HAND)}")
    try:
        HAND[action](cloud, **body)
    except (KeyError, TypeError) as error:
        raise HttpFault(400, "invalid", f"{action}: {error}") from None
    return {"done": action}


def group_summary(cloud: FakeCloud) -> Json:
    return {
        "groups": [
            {
                "name": g["name"],
                "address": json.loads(g.get("description") or "{}").get("poolform:address"),
                "targetSize": g.get("targetSize"),
                "template": cloud.template_of(g),
            }
            for g in cloud.groups.values()
        ]
    }


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
        if url.path.startswith("/fake/"):
            return self._admin(url.path, raw)
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
                return self._reply(error.status, _error(error), retry_after=error.retry_after)
        self._reply(200, result)

    do_GET = do_POST = do_PATCH = do_DELETE = _serve

    def _admin(self, path: str, raw: bytes) -> None:
        with self.cloud.lock:
            try:
                if path == "/fake/groups":
                    return self._reply(200, group_summary(self.cloud))
                action = path.removeprefix("/fake/hand/")
                return self._reply(200, hand_change(self.cloud, action, json.loads(raw or b"{}")))
            except HttpFault as error:
                return self._reply(error.status, _error(error))

    def _reply(self, status: int, body: Json, retry_after: str | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        if retry_after is not None:
            self.send_header("Retry-After", retry_after)
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
        # stop() waits for serve_forever's next look (0.5 s by default): a test's teardown
        # need not wait that long for a server it made.
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

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
