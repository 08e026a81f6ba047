"""The servers the team-backend tests talk to, reached through environment variables.

* PostgreSQL: ``POOLFORM_TEST_PG_URL`` (``.ci/run`` starts one on 127.0.0.1). Without it the
  PostgreSQL tests are skipped with a message, except under ``CI=true``, where they fail.
* S3: moto in server mode over HTTP, one per test process, answering one request at a time
  (see AtomicMotoServer). In one process the AWS tests' resets of moto land between tests,
  never inside one: each test makes its bucket again.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PG_VARIABLE = "POOLFORM_TEST_PG_URL"
BUCKET = "poolform-state-tests"
FAKE_AWS = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}


def missing_service(message: str) -> None:
    """Skip locally, fail in CI: a CI run never passes by not running the tests."""
    if os.environ.get("CI", "").lower() in ("true", "1", "yes"):
        pytest.fail(f"{message} (CI=true: this test must run)")
    pytest.skip(message)


def pg_url() -> str:
    url = os.environ.get(PG_VARIABLE, "")
    if not url:
        missing_service(f"no PostgreSQL: set {PG_VARIABLE} (.ci/run starts a server and sets it)")
    return url


def new_schema() -> str:
    return f"t_{uuid.uuid4().hex[:16]}"


def drop_schema(url: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def make_bucket(endpoint: str) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
        client.create_bucket(Bucket=BUCKET)


class AtomicMotoServer:
    """moto in server mode, over HTTP, answering one request at a time.

    S3 makes a conditional PUT (``If-None-Match: *``, ``If-Match``) atomic: the lease and the
    journal rely on it. moto checks the condition and then writes, with no lock between, so
    two runners taking the lease at the same moment could both succeed (seen once in the
    eight-runners test on a loaded machine). Serving one request at a time gives moto the
    atomicity S3 has; the code under test is unchanged.
    """

    def __init__(self) -> None:
        from moto.moto_server.werkzeug_app import (
            DomainDispatcherApplication,
            MotoRequestHandler,
            create_backend_app,
        )
        from werkzeug.serving import make_server

        self.app = DomainDispatcherApplication(create_backend_app)
        one_at_a_time = threading.Lock()

        def atomic(environ: Any, start_response: Any) -> list[bytes]:
            with one_at_a_time:
                return self.serve(environ, start_response)

        self._server = make_server(
            "127.0.0.1", 0, atomic, threaded=True, request_handler=MotoRequestHandler
        )
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        host, port = self._server.server_address[:2]
        self.endpoint = f"http://{host!s}:{port}"

    def serve(self, environ: Any, start_response: Any) -> list[bytes]:
        """One request, answered by moto (a test's server may answer otherwise)."""
        return list(self.app(environ, start_response))

    def stop(self) -> None:
        self._server.shutdown()
        self._thread.join()


@pytest.fixture
def schema() -> Iterator[tuple[str, str]]:
    """A fresh PostgreSQL schema on the test server, dropped after: (url, schema name). A test
    module imports it (and lists it in `__all__`) to use it."""
    url, name = pg_url(), new_schema()
    yield url, name
    drop_schema(url, name)


@pytest.fixture(scope="session")
def moto_s3() -> Iterator[str]:
    """This process's own S3 (not the shared POOLFORM_MOTO_ENDPOINT, whose threads race on
    conditional writes): see AtomicMotoServer."""
    server = AtomicMotoServer()
    yield server.endpoint
    server.stop()


@pytest.fixture
def s3_endpoint(moto_s3: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A moto S3 with the test bucket, fake credentials in the environment."""
    for name, value in FAKE_AWS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    make_bucket(moto_s3)
    yield moto_s3


class PrivatePostgres:
    """A PostgreSQL server of one test's own (so the test may kill it): initdb into a temporary
    directory, run as the `postgres` user when the tests run as root."""

    def __init__(self) -> None:
        import shutil
        import socket
        import subprocess

        self._run = subprocess.run
        found = os.environ.get("POOLFORM_TEST_PG_BIN") or next(
            iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True)), None
        )
        if not found or not (Path(found) / "pg_ctl").exists():
            missing_service("no PostgreSQL binaries (set POOLFORM_TEST_PG_BIN)")
        self.bin = Path(str(found))
        # Not under pytest's tmp_path: the `postgres` user could not reach into it.
        directory = Path(tempfile.mkdtemp(prefix="poolform-pg-"))
        self.root = directory
        self.data = directory / "data"
        self.as_postgres = ["runuser", "-u", "postgres", "--"] if os.getuid() == 0 else []
        if os.getuid() == 0:
            shutil.chown(directory, "postgres")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self._pg(str(self.bin / "initdb"), "-D", str(self.data), "-U", "poolform", "-A", "trust")
        self.url = f"postgresql://poolform@127.0.0.1:{self.port}/postgres"
        self.start()

    def _pg(self, *args: str) -> None:
        done = self._run([*self.as_postgres, *args], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed: {done.stdout}{done.stderr}")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off"
        log = str(self.root / "server.log")
        self._pg(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", log, "-o", options, "-w", "start"
        )

    def kill(self) -> None:
        """Stop at once, as a crash would (no shutdown checkpoint, connections cut)."""
        self._pg(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop")

    def stop(self) -> None:
        import shutil

        with contextlib.suppress(RuntimeError):
            self.kill()
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def team_configuration(
    request: pytest.FixtureRequest, tmp_path: Path, pools: str, *, key_prefix: str = "lost"
) -> Iterator[tuple[Path, dict[str, str]]]:
    """A configuration on the team backend `request.param` names ("postgres" or "s3"), the
    local provider and `pools`, not applied: (its directory, the environment it needs). Its
    PostgreSQL schema is dropped afterwards; an S3 state gets a key of its own."""
    directory = tmp_path / "team"
    directory.mkdir()
    if request.param == "postgres":
        url, schema = pg_url(), new_schema()
        state = f"{{backend: postgres, dsn: '${{env:TEAM_PG}}', key: {schema}}}"
        env = {"TEAM_PG": url}
    else:
        endpoint = request.getfixturevalue("s3_endpoint")
        state = f"{{backend: s3, bucket: {BUCKET}, key: {key_prefix}-{uuid.uuid4().hex[:8]}}}"
        env = {"AWS_ENDPOINT_URL": endpoint}
    (directory / "cluster.yaml").write_text(
        f"kind: Cluster\nname: team\nprovider: local\nstate: {state}\n"
    )
    (directory / "pools.yaml").write_text(pools)
    try:
        yield directory, env
    finally:
        if request.param == "postgres":
            drop_schema(url, schema)
