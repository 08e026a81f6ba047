"""A team's repository and capacity, as the CI flows meet them.

The repository holds the example workflows and scripts where examples/ci/README.md says to put
them (.github/workflows/, .gitlab-ci.yml, ci/poolform/) and a configuration in capacity/ on
the local provider. The local provider's simulated cloud lives in `.poolform/` beside the
configuration: every runner's checkout links that directory to one place, standing for the
cloud account all runners reach. The state is in the same place (SQLite, runners sharing a
disk) or on PostgreSQL (only the backend shared), as the test's backend says.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.ci.features import poolform_command
from tests.ci.repo import Origin

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "ci"
CONFIG = "capacity"

CLUSTER = """kind: Cluster
name: team
provider: local
{state}"""

MACHINE_POOL = """kind: MachinePool
name: shared
machine_types:
  - machine_type: cpu
    launch_templates:
      - instance_type: m5.large
    partitions: [{{name: any, size: {cpu}}}]
  - machine_type: batch
    launch_templates:
      - instance_type: c5.xlarge
    partitions: [{{name: any, size: {batch}}}]
"""

RESOURCE_POOL = """kind: ResourcePool
name: {name}
capacity: {{gpu: {gpu}}}
"""


def machine_pool(cpu: int = 2, batch: int = 2) -> str:
    return MACHINE_POOL.format(cpu=cpu, batch=batch)


def resource_pool(name: str, gpu: int) -> str:
    return RESOURCE_POOL.format(name=name, gpu=gpu)


@dataclass(frozen=True)
class Backend:
    name: str  # sqlite | postgres
    state: str  # the Cluster's `state:` line, empty for the default SQLite beside the config
    secrets: dict[str, str]  # what the CI's secret store holds for it


class Team:
    def __init__(self, tmp_path: Path, backend: Backend) -> None:
        self.tmp = tmp_path
        self.backend = backend
        self.cloud = tmp_path / "cloud"
        self.cloud.mkdir()
        self.origin = Origin(tmp_path / "origin")
        self.machines = 0
        home = tmp_path / "home"
        home.mkdir()
        self.environ = {
            "PATH": f"{Path(poolform_command()[0]).parent}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "LANG": "C.UTF-8",
            "NO_COLOR": "1",
            "PYTHONDONTWRITEBYTECODE": "1",
            "TMPDIR": str(tmp_path),
        }
        self.origin.copy_tree("main", EXAMPLES / "scripts", "ci/poolform", "CI scripts")
        self.origin.copy_tree(
            "main", EXAMPLES / "github-actions", ".github/workflows", "GitHub workflows"
        )
        self.origin.commit(
            "main",
            {".gitlab-ci.yml": (EXAMPLES / "gitlab" / ".gitlab-ci.yml").read_text()},
            "GitLab pipeline",
        )
        self.origin.commit(
            "main",
            {
                f"{CONFIG}/cluster.yaml": CLUSTER.format(state=backend.state),
                f"{CONFIG}/machine-pool.yaml": machine_pool(),
                f"{CONFIG}/gpus.yaml": resource_pool("gpus", 16),
                ".gitignore": ".poolform/\n",
            },
            "capacity",
        )

    def link_cloud(self, workspace: Path) -> None:
        """What every runner's machine reaches: the cloud account (and a shared SQLite state)."""
        (workspace / CONFIG / ".poolform").symlink_to(self.cloud, target_is_directory=True)

    def machine(self, sha: str | None = None) -> Path:
        """A fresh checkout of main (or `sha`) for someone working by hand."""
        self.machines += 1
        workspace = self.tmp / f"machine-{self.machines}"
        self.origin.checkout(sha or self.origin.head(), workspace)
        self.link_cloud(workspace)
        return workspace

    def poolform(self, *args: str, sha: str | None = None) -> subprocess.CompletedProcess[str]:
        """poolform run by hand in capacity/ of a fresh checkout, with the team's secrets."""
        workspace = self.machine(sha)
        return subprocess.run(
            [*poolform_command(), *args],
            cwd=workspace / CONFIG,
            env={**self.environ, **self.backend.secrets, "CI": "true"},
            capture_output=True,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=300,
            check=False,
        )

    def state(self) -> dict[str, Any]:
        done = self.poolform("state", "pull")
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    def records(self) -> dict[str, Any]:
        return {r["address"]: r["attributes"] for r in self.state()["resources"]}

    def apply_by_hand(self) -> None:
        done = self.poolform("apply", "--auto-approve")
        assert done.returncode == 0, done.stdout + done.stderr

    def reviewed_changes(self, plan: bytes) -> list[dict[str, Any]]:
        """The changes a saved plan holds, as `poolform show --json` reads them."""
        path = self.tmp / f"reviewed-{len(plan)}-{os.getpid()}.bin"
        path.write_bytes(plan)
        done = subprocess.run(
            [*poolform_command(), "show", str(path), "--json"],
            env={**self.environ, **self.backend.secrets},
            capture_output=True,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return list(json.loads(done.stdout)["changes"])


def applied_exactly(before: dict[str, Any], changes: list[dict[str, Any]]) -> dict[str, Any]:
    """The records `before` would become by applying exactly `changes`."""
    expected = dict(before)
    for change in changes:
        if change["action"] == "delete":
            expected.pop(change["address"], None)
        else:
            expected[change["address"]] = change["after"]
    return expected
