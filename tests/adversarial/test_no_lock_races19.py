"""Reading an S3 state without the lock while writers fold its journal.

A run that holds the lock ends by folding its journal into a new snapshot and deleting the
folded entries; the next run appends entries after the new snapshot. A reader without the lock
(`plan --no-lock`, `show`, `state pull`) that fetched the snapshot just before a fold then lists
a journal whose first entries are gone: it read that as damage ("the S3 state journal is
damaged"), and `plan --no-lock`'s retry could not help, as the damage was met while opening
the backend (outside the retry) or, on a retry, against the snapshot it had cached. Now a
reader that does not hold the lock starts again from the head when the journal does not follow
its snapshot, and reads the state as it is now.

The race is made exact: moto answers the reader's first GET of the snapshot with the bytes the
snapshot held before the last fold, as S3 does to a reader whose GET came just before it.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.conftest import Pf
from tests.state.services import BUCKET, FAKE_AWS, AtomicMotoServer, make_bucket


class ServesAnOldSnapshot(AtomicMotoServer):
    """moto, one request at a time; when `old` is set, the next GET of a snapshot is answered
    with those bytes (the snapshot before a fold), once."""

    def __init__(self) -> None:
        self.old: bytes | None = None
        super().__init__()

    def serve(self, environ: Any, start_response: Any) -> list[bytes]:
        path = environ.get("PATH_INFO", "")
        if self.old is None or environ["REQUEST_METHOD"] != "GET":
            return super().serve(environ, start_response)
        if not path.endswith("/snapshot.json"):
            return super().serve(environ, start_response)
        body, self.old = self.old, None
        answered: dict[str, Any] = {}

        def keep(status: str, headers: list[tuple[str, str]], *_: Any) -> Any:
            answered.update(status=status, headers=headers)
            return lambda data: None

        list(self.app(environ, keep))
        # The old object's own length, ETag and no checksum of the new one's bytes.
        headers = [
            (k, v)
            for k, v in answered["headers"]
            if k.lower() not in ("content-length", "etag") and "checksum" not in k.lower()
        ]
        etag = f'"{hashlib.md5(body).hexdigest()}"'
        headers += [("Content-Length", str(len(body))), ("ETag", etag)]
        start_response(answered["status"], headers)
        return [body]


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[ServesAnOldSnapshot]:
    for name, value in FAKE_AWS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    server = ServesAnOldSnapshot()
    make_bucket(server.endpoint)
    yield server
    server.stop()


def pools(seats: dict[int, int]) -> str:
    return "".join(
        f"---\nkind: ResourcePool\nname: p{n}\ncapacity: {{seat: {count}}}\n"
        for n, count in sorted(seats.items())
    )


def test_a_read_without_the_lock_that_meets_a_folded_journal_reads_the_state_now(
    pf: Pf, tmp_path: Path, s3: ServesAnOldSnapshot
) -> None:
    import boto3

    env = {"AWS_ENDPOINT_URL": s3.endpoint}
    client = boto3.client("s3", endpoint_url=s3.endpoint, region_name="us-east-1")
    prefix = f"fold-{uuid.uuid4().hex[:8]}"
    directory = tmp_path / "team"
    directory.mkdir()
    (directory / "cluster.yaml").write_text(
        "kind: Cluster\nname: team\nprovider: local\n"
        f"state:\n  backend: s3\n  bucket: {BUCKET}\n  key: {prefix}\n"
    )
    config = directory / "pools.yaml"
    seats = dict.fromkeys(range(30), 1)
    config.write_text(pools(seats))
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0

    def snapshot() -> tuple[str, bytes]:
        listed = client.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/lineages/")
        key = next(o["Key"] for o in listed["Contents"] if o["Key"].endswith("/snapshot.json"))
        return key, client.get_object(Bucket=BUCKET, Key=key)["Body"].read()

    def journal() -> list[str]:
        listed = client.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/lineages/")
        return [o["Key"] for o in listed.get("Contents", []) if "/journal/" in o["Key"]]

    _key, before = snapshot()
    seats.update(dict.fromkeys(range(15), 2))  # a change big enough to be folded at its end
    config.write_text(pools(seats))
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    assert journal() == [] and snapshot()[1] != before  # folded, its entries deleted
    seats[29] = 3  # a small one after it: its entries stay in the journal
    config.write_text(pools(seats))
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    assert journal() != []
    now = pf("state", "pull", "--chdir", directory, env=env).stdout
    assert '"serial"' in now

    s3.old = before  # the reader's GET of the snapshot came just before the fold
    planned = pf("plan", directory, "--no-lock", "--detailed-exitcode", env=env)
    assert s3.old is None  # the old snapshot was served
    assert planned.returncode == 0, planned.stderr  # the state as it is now: nothing to do
    assert "damaged" not in planned.stderr

    for command in (("show", directory), ("state", "pull", "--chdir", directory)):
        s3.old = before
        read = pf(*command, env=env)
        assert s3.old is None
        assert read.returncode == 0, read.stderr
        assert "damaged" not in read.stderr
        assert "seat" in read.stdout
    s3.old = before
    assert pf("state", "pull", "--chdir", directory, env=env).stdout == now


def test_a_plan_read_without_the_lock_while_a_run_changes_the_state_says_so(
    pf: Pf, quick: Path
) -> None:
    """Read while an apply holds the lock, the state is one version part-way through that
    apply, and the refresh meets cloud changes not yet recorded (a pool resized by the apply
    read as "changed outside poolform: only a replacement restores it"). The plan said
    nothing of it; now it warns, naming the run. A lock held by a run that only reads (another
    plan) is no reason to. `drift --no-lock` (and `plan --refresh-only --no-lock`) warn as
    well, on stderr (their JSON document is closed)."""
    import json

    from state.sqlite import SqliteStateBackend, default_state_path

    assert pf("apply", quick, "--auto-approve").returncode == 0
    backend = SqliteStateBackend(default_state_path(quick.resolve()))
    try:
        for operation, warned in (("apply", True), ("plan", False)):
            held = backend.lock(operation)
            try:
                planned = pf("plan", quick, "--no-lock", "--json")
                assert planned.returncode == 0, planned.stderr
                warnings = json.loads(planned.stdout)["warnings"]
                said = [w for w in warnings if "while this plan read it without the lock" in w]
                assert bool(said) == warned, warnings
                if warned:
                    assert f"pid {held.pid}" in said[0] and "`apply`" in said[0]
                    text = pf("plan", quick, "--no-lock")
                    assert "may show that run's changes half-made" in text.stdout + text.stderr
                for drift in (("drift", quick), ("plan", quick, "--refresh-only", "--json")):
                    checked = pf(*drift, "--no-lock")
                    assert checked.returncode == 0, checked.stderr
                    told = "while this drift check read it without the lock" in checked.stderr
                    assert told == warned, checked.stderr
            finally:
                backend.unlock(held.lock_id)
        quiet = pf("plan", quick, "--no-lock", "--json")
        assert json.loads(quiet.stdout)["warnings"] == []
    finally:
        backend.close()
