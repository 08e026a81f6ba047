"""An S3 state whose server writes a journal entry and then loses the answer (a 500, a
connection cut after the write, as a flaky network or an overloaded S3-compatible store does).

botocore retries the PUT; its `If-None-Match: *` now finds the entry there, the server says
412, and the apply failed half-way with "another writer changed the state at the same time
(journal entry N was taken)": no other writer existed (the lease says so), and the entry was
its own. Now an entry found there that is byte for byte the one being written is taken as
written, and the apply goes on. The server here is moto in server mode that, once, writes the
first journal entry it is sent and answers 500."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.conftest import Pf
from tests.state.services import BUCKET, FAKE_AWS, AtomicMotoServer, make_bucket


class LosesOneAnswer(AtomicMotoServer):
    """moto, one request at a time; when armed, the next journal PUT is written and then
    answered with a 500."""

    def __init__(self) -> None:
        self.armed = False
        self.lost = 0
        super().__init__()

    def serve(self, environ: Any, start_response: Any) -> list[bytes]:
        journal = "/journal/" in environ.get("PATH_INFO", "")
        if self.armed and environ["REQUEST_METHOD"] == "PUT" and journal:
            self.armed = False
            list(self.app(environ, lambda *args: lambda data: None))  # the write lands
            self.lost += 1
            start_response("500 Internal Server Error", [("Content-Type", "text/xml")])
            return [b"<Error><Code>InternalError</Code><Message>lost</Message></Error>"]
        return super().serve(environ, start_response)


@pytest.fixture
def flaky_s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[LosesOneAnswer]:
    for name, value in FAKE_AWS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    server = LosesOneAnswer()
    make_bucket(server.endpoint)
    yield server
    server.stop()


CONFIG = """kind: Cluster
name: team
provider: local
state: {{backend: s3, bucket: {bucket}, key: {prefix}}}
---
kind: ResourcePool
name: seats
capacity: {{seat: {seats}}}
"""


def test_a_journal_entry_whose_answer_was_lost_is_taken_as_written(
    pf: Pf, tmp_path: Path, flaky_s3: LosesOneAnswer
) -> None:
    env = {"AWS_ENDPOINT_URL": flaky_s3.endpoint}
    directory = tmp_path / "team"
    directory.mkdir()
    prefix = f"lost-{uuid.uuid4().hex[:8]}"
    config = directory / "config.yaml"
    config.write_text(CONFIG.format(bucket=BUCKET, prefix=prefix, seats=2))
    flaky_s3.armed = True
    applied = pf("apply", directory, "--auto-approve", env=env)
    assert flaky_s3.lost == 1  # the answer to the first journal entry was lost
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert "another writer" not in applied.stderr
    assert pf("plan", directory, "--detailed-exitcode", env=env).returncode == 0

    config.write_text(CONFIG.format(bucket=BUCKET, prefix=prefix, seats=3))
    flaky_s3.armed = True  # and again on a state that has a journal already
    changed = pf("apply", directory, "--auto-approve", env=env)
    assert flaky_s3.lost == 2
    assert changed.returncode == 0, changed.stdout + changed.stderr
    assert pf("plan", directory, "--detailed-exitcode", env=env).returncode == 0
