"""A secret set in the configuration never leaves it: not in plans, saved plans, state or logs,
while plans still report that it changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

CANARY = "CANARY-7f3e-do-not-print"
POOL = """kind: MachinePool
name: secrets
machine_types:
  - machine_type: cpu
    launch_templates:
      - instance_type: m5.large
        user_data: {user_data}
    partitions: [{{name: any, size: 2}}]
"""


def every_byte_under(directory: Path) -> bytes:
    return b"".join(
        p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file() and p.suffix != ".yaml"
    )


@pytest.mark.parametrize("spelling", ["inline", "env"])
def test_canary_appears_in_no_output_and_no_file(
    run, write, monkeypatch, tmp_path: Path, spelling: str
) -> None:
    monkeypatch.setenv("POOLFORM_TEST_SECRET", CANARY)
    value = CANARY if spelling == "inline" else "${env:POOLFORM_TEST_SECRET}"
    directory = write({"pool.yaml": POOL.format(user_data=json.dumps(value))})
    outputs = [run("plan", directory, flag) for flag in ("--json", "--markdown")]
    outputs.append(run("plan", directory, "-out", tmp_path / "plan.out"))
    outputs.append(run("show", tmp_path / "plan.out", "--json"))
    for result in outputs:
        assert result.code == 0, result.err
        assert CANARY not in result.out + result.err
    assert CANARY.encode() not in (tmp_path / "plan.out").read_bytes()
    assert CANARY.encode() not in every_byte_under(directory / ".poolform")

    # What apply records is the salted hash; change the secret and plan still sees the change.
    from reconciler.checks import load_configuration
    from reconciler.plan.expand import expand
    from reconciler.workspace import secret_salt
    from state import ResourceRecord
    from state.sqlite import SqliteStateBackend, default_state_path

    configuration = load_configuration(directory)
    backend = SqliteStateBackend(default_state_path(directory))
    lineage = backend.read().lineage
    salt = secret_salt(configuration, lineage)
    environment = {"POOLFORM_TEST_SECRET": CANARY}
    for resource in expand(configuration, salt, environment=environment).values():
        backend.write_resource(
            ResourceRecord(resource.address, resource.resource_type, resource.attributes),
            expected_lineage=lineage,
        )
    backend.close()
    assert CANARY.encode() not in every_byte_under(directory / ".poolform")
    pulled = run("state", "pull", "--chdir", directory)
    assert pulled.code == 0, pulled.err
    assert CANARY not in pulled.out and "sensitive:sha256:" in pulled.out

    # state written by hand above has no provider ids: compare against state only
    assert run("plan", directory, "--detailed-exitcode", "--no-refresh").code == 0
    monkeypatch.setenv("POOLFORM_TEST_SECRET", CANARY + "-rotated")
    rotated = POOL.format(user_data=json.dumps(value if spelling == "env" else CANARY + "-rotated"))
    (directory / "pool.yaml").write_text(rotated)
    changed = run("plan", directory, "--detailed-exitcode", "--no-refresh")
    assert changed.code == 2
    assert "user_data = (sensitive)" in changed.out
    assert CANARY not in changed.out + changed.err
