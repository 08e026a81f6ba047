"""A code host's REST API, faked: an HTTP server on 127.0.0.1 in a thread of the test.

Routes map a method and a path pattern to a handler of the fake; every request is recorded
(method, path, query, headers, JSON body) so tests can say what the scripts asked for.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: Mapping[str, Sequence[str]]
    headers: Mapping[str, str]
    body: Any

    def arg(self, name: str, default: str = "") -> str:
        values = self.query.get(name)
        return values[0] if values else default


@dataclass(frozen=True)
class Response:
    status: int
    body: Any = None
    raw: bytes | None = None
    headers: Mapping[str, str] = field(default_factory=dict)


Handler = Callable[[Request, re.Match[str]], Response]


@dataclass(frozen=True)
class Route:
    method: str
    pattern: re.Pattern[str]
    handler: Handler
    public: bool = False  # served without the token (blob downloads)


def route(method: str, pattern: str, handler: Handler, *, public: bool = False) -> Route:
    return Route(method, re.compile(pattern + "$"), handler, public)


def page_of(items: Sequence[Any], request: Request, default_size: int) -> list[Any]:
    size = int(request.arg("per_page", str(default_size)))
    number = int(request.arg("page", "1"))
    return list(items[(number - 1) * size : number * size])


class FakeApi:
    """Subclasses provide routes() and authorized(request)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.requests: list[Request] = []
        self.url = ""
        # Answers to give the next requests of a method instead of handling them (outages).
        self.outages: dict[str, list[int]] = {}

    def routes(self) -> list[Route]:
        raise NotImplementedError

    def authorized(self, request: Request) -> bool:
        raise NotImplementedError

    def handle(self, request: Request) -> Response:
        with self.lock:
            self.requests.append(request)
            if self.outages.get(request.method):
                return Response(self.outages[request.method].pop(0), {"message": "Bad Gateway"})
            for candidate in self.routes():
                match = candidate.pattern.match(request.path)
                if match and candidate.method == request.method:
                    if not candidate.public and not self.authorized(request):
                        return Response(401, {"message": "Bad credentials"})
                    return candidate.handler(request, match)
            return Response(404, {"message": "Not Found"})

    @contextmanager
    def serving(self) -> Iterator[str]:
        api = self

        class _Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                data = self.rfile.read(length) if length else b""
                body = json.loads(data) if data else None
                request = Request(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    {key.lower(): value for key, value in self.headers.items()},
                    body,
                )
                response = api.handle(request)
                payload = (
                    response.raw
                    if response.raw is not None
                    else b""
                    if response.body is None
                    else json.dumps(response.body).encode()
                )
                self.send_response(response.status)
                for key, value in response.headers.items():
                    self.send_header(key, value)
                kind = (
                    "application/octet-stream" if response.raw is not None else "application/json"
                )
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

            def log_message(self, *args: Any) -> None:
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        # shutdown() waits for serve_forever's next look (0.5 s by default), every test.
        thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        thread.start()
        self.url = f"http://127.0.0.1:{server.server_address[1]}"
        try:
            yield self.url
        finally:
            server.shutdown()
            server.server_close()
            thread.join()
