"""A secret never leaves memory in clear on the local provider: not in the local cloud's
database, not in a worker's log, not in the log tail a failed setup shows, not after destroy;
and a worker's directory and files are its owner's only."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

from providers.local.admin import list_instances

CANARIES = {
    "inline user_data": "CANARY-ud-1c9e",
    "env user_data": "CANARY-env-77d2",
    "worker secret": "CANARY-ws-40af",
}
CLUSTER = "kind: Cluster\nname: c\nprovider: local\n"
POOL = """kind: MachinePool
name: p
machine_types:
  - machine_type: inline
    launch_templates: [{instance_type: m5.large, user_data: "echo CANARY-ud-1c9e"}]
    partitions: [{name: any, size: 1, warm: 1}]
  - machine_type: env
    launch_templates: [{instance_type: m5.large, user_data: "${env:POOLFORM_CANARY}"}]
    partitions: [{name: any, size: 1, warm: 1}]
"""
WORKERS = """kind: WorkerPool
name: w
pool: {workers: 2}
resources: {instance_type: c5.xlarge}
workdir: src
secrets: {TOKEN: CANARY-ws-40af}
setup: |
  echo "token is $TOKEN"
  echo "no secret here" > made-by-setup.txt
"""
FAILING = """kind: WorkerPool
name: broken
pool: {workers: 1}
resources: {instance_type: c5.xlarge}
secrets: {TOKEN: CANARY-ws-40af}
setup: |
  echo "about to fail with $TOKEN"
  exit 4
"""


def leaks(directory: Path) -> dict[str, list[str]]:
    """Which canaries any file under .poolform/ holds, and where."""
    found: dict[str, list[str]] = {}
    for path in sorted((directory / ".poolform").rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            for name, canary in CANARIES.items():
                if canary.encode() in data:
                    found.setdefault(name, []).append(str(path.relative_to(directory)))
    return found


@pytest.fixture
def configuration(write: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("POOLFORM_CANARY", CANARIES["env user_data"])
    directory: Path = write(
        {"cluster.yaml": CLUSTER, "pool.yaml": POOL, "workers.yaml": WORKERS, "src/run.sh": "#"}
    )
    (directory / "src" / "run.sh").chmod(0o755)
    (directory / "src" / "data.txt").write_text("data")
    (directory / "src" / "data.txt").chmod(0o644)
    return directory


def test_no_secret_at_rest_after_apply_failed_setup_and_destroy(
    run: Any, configuration: Path
) -> None:
    applied = run("apply", configuration, "--auto-approve")
    assert applied.code == 0, applied.err
    assert leaks(configuration) == {}
    assert run("drift", configuration).code == 0  # hashes are enough to see nothing changed

    (configuration / "broken.yaml").write_text(FAILING)
    failed = run("apply", configuration, "--auto-approve")
    assert failed.code == 1
    assert "about to fail with (sensitive)" in failed.err  # the tail, redacted
    for canary in CANARIES.values():
        assert canary not in failed.out + failed.err
    assert leaks(configuration) == {}

    (configuration / "broken.yaml").unlink()
    destroyed = run("destroy", configuration, "--auto-approve")
    assert destroyed.code == 0, destroyed.err
    assert leaks(configuration) == {}


def test_worker_directories_and_files_are_private(run: Any, configuration: Path) -> None:
    assert run("apply", configuration, "--auto-approve").code == 0
    workers = [
        i for i in list_instances(configuration / ".poolform") if i["address"] == "worker_pool.w"
    ]
    assert len(workers) == 2
    for worker in workers:
        directory = Path(worker["workdir"])
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        modes = {
            p.name: stat.S_IMODE(p.stat().st_mode) for p in directory.rglob("*") if p.is_file()
        }
        assert modes == {
            "setup.log": 0o600,
            "made-by-setup.txt": 0o600,
            "data.txt": 0o600,
            "run.sh": 0o700,  # still runs
        }
        assert "token is (sensitive)" in (directory / "setup.log").read_text()


def test_a_user_data_changed_by_hand_is_still_drift(run: Any, configuration: Path) -> None:
    from providers.local.admin import change_template

    assert run("apply", configuration, "--auto-approve").code == 0
    address = "machine_pool.p.machine_type.inline"
    change_template(configuration / ".poolform", address, user_data="echo CANARY-ud-1c9e")
    assert run("drift", configuration).code == 0  # set back to what poolform wrote: no drift
    change_template(configuration / ".poolform", address, user_data="curl evil")
    drift = run("drift", configuration)
    assert drift.code == 2 and "user_data" in drift.out
    assert leaks(configuration) == {}
    assert run("apply", configuration, "--auto-approve").code == 0
    assert run("drift", configuration).code == 0
