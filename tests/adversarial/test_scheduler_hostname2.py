"""A host without a usable machine id, as a container meets it: /etc/machine-id empty, all
zeros or systemd's "uninitialized", so the hostname is the host's identity; then the host
renamed. Each `poolform` runs in its own mount and UTS namespaces (`unshare`), where the
machine-id files are covered by another file and the hostname is set: nothing outside the
namespace changes. Skipped where namespaces cannot be made (not root, no unshare)."""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.scheduler_setup import applied, group_alive, job_file, job_group, refused
from tests.scenario.installed import poolform_command
from tests.scheduler.scenario import TERMINAL, ok, statuses

MACHINE_ID_FILES = ("/etc/machine-id", "/var/lib/dbus/machine-id")
COVER = """set -e
for file in {files}; do
  if [ -e "$file" ]; then mount --bind "$1" "$file"; fi
done
hostname "$2"
shift 2
exec "$@"
"""


@functools.cache
def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "-u", "--propagation", "private", "hostname", "probe"],
        capture_output=True,
        timeout=30,
    )
    return probe.returncode == 0


@pytest.fixture(autouse=True)
def namespaces() -> None:
    if not _namespaces_work():
        pytest.skip("needs unshare -m -u (root): the machine id and hostname are covered there")


def on_host(
    tmp_path: Path, hostname: str, machine_id: str, *args: object, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`poolform ARGS` on a host named `hostname` whose machine-id files hold `machine_id`."""
    import os

    cover = tmp_path / f"machine-id-{abs(hash(machine_id))}"
    cover.write_text(machine_id)
    script = COVER.format(files=" ".join(MACHINE_ID_FILES))
    command = ["unshare", "-m", "-u", "--propagation", "private", "sh", "-c", script, "sh"]
    environment = {**os.environ, "CI": "true", "NO_COLOR": "1"}
    environment.pop("POOLFORM_HOST_ID", None)  # the host's identity is what the test sets
    environment.update(env or {})
    return subprocess.run(
        [*command, str(cover), hostname, *poolform_command(), *map(str, args)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


def succeeded(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, (result.stdout, result.stderr)
    return result


def _held(tmp_path: Path) -> tuple[Path, Path]:
    directory = applied(tmp_path)
    gate = tmp_path / "gate"
    job = job_file(
        tmp_path,
        f"kind: Job\nname: held\npool: seats\nrun: while [ ! -e {gate} ]; do sleep 0.05; done\n",
    )
    ok("jobs", "submit", job, "--chdir", directory)
    return directory, gate


def _place(tmp_path: Path, directory: Path, *host: Any) -> dict[str, Any]:
    import json

    shown = succeeded(on_host(tmp_path, *host, "jobs", "show", "1", "--json", "--chdir", directory))
    place: dict[str, Any] = json.loads(shown.stdout)["place"]
    return place


@pytest.mark.parametrize(
    "machine_id",
    ["", "0" * 32 + "\n", "uninitialized\n", "not-hex-at-all\n"],
    ids=["empty", "zeros", "uninitialized", "garbage"],
)
def test_without_a_usable_machine_id_the_hostname_is_the_identity(
    tmp_path: Path, machine_id: str
) -> None:
    """Never `machine-id:000...` (every such container would be one host, and fence each
    other's jobs): the hostname, and the job is recorded by the same host."""
    directory, gate = _held(tmp_path)
    succeeded(
        on_host(tmp_path, "box-1", machine_id, "scheduler", "run", "--once", "--chdir", directory)
    )
    place = _place(tmp_path, directory, "box-1", machine_id)
    assert (place["host"], place["host_name"], place["elsewhere"]) == (
        "hostname:box-1",
        "box-1",
        False,
    )
    gate.touch()
    for _ in range(100):
        result = succeeded(
            on_host(
                tmp_path, "box-1", machine_id, "scheduler", "run", "--once", "--chdir", directory
            )
        )
        assert "not here" not in result.stderr
        if statuses(directory)[1] in TERMINAL:
            break
    assert statuses(directory) == {1: "succeeded"}


def test_a_renamed_host_without_machine_id_gets_its_jobs_back_as_documented(
    tmp_path: Path,
) -> None:
    """Renamed, the host takes its own job for another host's: it neither starts it again nor
    stops it (it may run elsewhere), and `--gone` is refused (its process plainly runs here);
    with
    POOLFORM_HOST_ID=hostname:OLD-NAME (the README's way back) it records the job's end."""
    directory, gate = _held(tmp_path)
    succeeded(on_host(tmp_path, "old-name", "", "scheduler", "run", "--once", "--chdir", directory))
    group = job_group(directory, 1)
    renamed = succeeded(
        on_host(tmp_path, "new-name", "", "scheduler", "run", "--once", "--chdir", directory)
    )
    assert "job 1 (attempt 1) runs on host old-name under" in renamed.stderr
    assert statuses(directory) == {1: "running"} and group_alive(group)
    assert _place(tmp_path, directory, "new-name", "")["elsewhere"] is True
    # It is not gone: its process runs on this machine (the foot-gun: --gone would free its
    # capacity while it runs, unwatched)
    refused(
        on_host(tmp_path, "new-name", "", "jobs", "cancel", "--gone", "1", "--chdir", directory),
        "job 1's process runs on this machine",
        "POOLFORM_HOST_ID='hostname:old-name'",
    )
    back = {"POOLFORM_HOST_ID": "hostname:old-name"}
    refused(
        on_host(
            tmp_path,
            "new-name",
            "",
            "jobs",
            "cancel",
            "--gone",
            "1",
            "--chdir",
            directory,
            env=back,
        ),
        "job 1 runs here",
    )
    gate.touch()
    for _ in range(100):
        result = succeeded(
            on_host(
                tmp_path,
                "new-name",
                "",
                "scheduler",
                "run",
                "--once",
                "--chdir",
                directory,
                env=back,
            )
        )
        assert "not here" not in result.stderr
        if statuses(directory)[1] in TERMINAL:
            break
    assert statuses(directory) == {1: "succeeded"}
    assert not (directory / ".poolform" / "jobs" / "1" / "attempt-2").exists()
