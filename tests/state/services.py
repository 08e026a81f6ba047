"""The servers the team-backend tests talk to, reached through environment variables.

* PostgreSQL: ``POOLFORM_TEST_PG_URL`` (``.ci/run`` starts one on 127.0.0.1). Without it the
  PostgreSQL tests are skipped with a message, except under ``CI=true``, where they fail.
* S3: moto in server mode at ``POOLFORM_MOTO_ENDPOINT`` (``.ci/run`` starts it), else an
  in-process moto server on a free port. The AWS tests reset that server between tests; these
  take the same file lock shared (the AWS tests take it exclusively), so no reset ever lands in
  the middle of one of them.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

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


@contextlib.contextmanager
def shared_moto(endpoint: str) -> Iterator[None]:
    """Hold the AWS tests' lock on a shared moto server, shared: see the module docstring."""
    if not (os.environ.get("POOLFORM_MOTO_ENDPOINT") and os.environ.get("PYTEST_XDIST_WORKER")):
        yield
        return
    digest = hashlib.sha256(endpoint.encode()).hexdigest()[:12]
    with open(Path(tempfile.gettempdir()) / f"poolform-moto-{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def make_bucket(endpoint: str) -> None:
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1")
    with contextlib.suppress(client.exceptions.BucketAlreadyOwnedByYou):
        client.create_bucket(Bucket=BUCKET)


@pytest.fixture(scope="session")
def moto_s3() -> Iterator[str]:
    shared = os.environ.get("POOLFORM_MOTO_ENDPOINT")
    if shared:
        yield shared.rstrip("/")
        return
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def s3_endpoint(moto_s3: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A moto S3 with the test bucket, fake credentials in the environment."""
    for name, value in FAKE_AWS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with shared_moto(moto_s3):
        make_bucket(moto_s3)
        yield moto_s3
