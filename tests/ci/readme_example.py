"""The pull request comment shown in README.md's "CI workflow" section, rendered for real: a
small configuration is applied, a change to it is planned by the installed poolform as the pull
request workflow plans it, and the comment is composed by the workflow's own code
(examples/ci/scripts/bodies.py), with a fixed commit and run address. The state's lineage, a
random UUID, is shown as a fixed one.

    python -m tests.ci.readme_example --write    re-render it into README.md
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from tests.scenario.installed import poolform_command

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
START = "<!-- ci-comment-example:start (rendered by tests/ci/readme_example.py) -->"
END = "<!-- ci-comment-example:end -->"
COMMIT = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
PULL_REQUEST = 42
RUN_URL = "https://github.com/acme/capacity/actions/runs/9876543210"
LINEAGE = "6f1c2e9a-3b7d-4e5f-8a90-1b2c3d4e5f60"

BEFORE = {
    "cluster.yaml": "kind: Cluster\nname: team\nprovider: local\n",
    "machine-pool.yaml": """kind: MachinePool
name: gpu
machine_types:
  - machine_type: a100
    launch_templates:
      - instance_type: p4d.24xlarge
    partitions: [{name: train, size: 2}]
  - machine_type: cpu
    launch_templates:
      - instance_type: m5.large
    partitions: [{name: any, size: 4}]
""",
    "quota.yaml": """kind: ResourcePool
name: team-quota
capacity: {gpu: 16}
---
kind: SubjectPolicy
name: research
subject: team/research
pool: team-quota
limit: {gpu: 8}
""",
}
# The pull request: the A100s become H100s, the CPU pool doubles, a new pool for evaluation
# runs, and the research policy goes.
AFTER = {
    **BEFORE,
    "machine-pool.yaml": BEFORE["machine-pool.yaml"]
    .replace("p4d.24xlarge", "p5.48xlarge")
    .replace("size: 4", "size: 8"),
    "quota.yaml": "kind: ResourcePool\nname: team-quota\ncapacity: {gpu: 16}\n---\n"
    "kind: ResourcePool\nname: eval\ncapacity: {gpu: 4}\n",
}


def scripts_module(name: str) -> ModuleType:
    """A module of examples/ci/scripts/, as the workflows run it (a plain file, no package)."""
    path = ROOT / "examples" / "ci" / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"poolform_ci_{name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _poolform(directory: Path, *args: str) -> str:
    done = subprocess.run(
        [*poolform_command(), *args],
        cwd=directory,
        env={**os.environ, "CI": "true", "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"poolform {' '.join(args)} failed: {done.stderr}")
    return done.stdout


def render() -> str:
    """The comment the pull request workflow posts for AFTER over an applied BEFORE."""
    bodies = scripts_module("bodies")
    with tempfile.TemporaryDirectory() as directory:
        workspace = Path(directory)
        config = workspace / "capacity"
        config.mkdir()
        for name, text in BEFORE.items():
            (config / name).write_text(text)
        _poolform(workspace, "apply", "capacity", "--auto-approve")
        lineage = json.loads(_poolform(config, "state", "pull"))["lineage"]
        for name, text in AFTER.items():
            (config / name).write_text(text)
        label = f"pull request #{PULL_REQUEST}"
        markdown = _poolform(
            workspace,
            *("plan", "capacity", "-out", "plan.bin", "--markdown"),
            *("--commit", COMMIT, "--label", label),
        )
    context = bodies.Context("capacity", COMMIT, RUN_URL)
    artifact = f"the artifact `poolform-plan-capacity-pr{PULL_REQUEST}-{COMMIT}`"
    return str(bodies.plan_comment(context, markdown.replace(lineage, LINEAGE), artifact))


def as_shown(comment: str) -> str:
    """The comment as README.md shows it: quoted, so its headings stay inside the quote."""
    quoted = "\n".join(f"> {line}".rstrip() for line in comment.rstrip().splitlines())
    return f"{START}\n{quoted}\n{END}"


def shown_in_readme(text: str) -> str:
    start, end = text.index(START), text.index(END) + len(END)
    return text[start:end]


def write() -> None:
    text = README.read_text()
    README.write_text(text.replace(shown_in_readme(text), as_shown(render())))


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit(__doc__)
    write()
