"""What the example workflows run is fixed by the repository, not by whatever was published
last: GitHub's hardening guide pins each action to a full commit SHA (a tag can be moved to
other code, which then runs with the job's token and cloud role), and every job installs the
same poolform release, so the merge (days after the review) applies the plan file with the
poolform that made it. A newer poolform plans differently and then refuses the reviewed file,
or reads it differently. The checkout keeps no token in .git/config for the steps after it."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.ci.team import EXAMPLES

WORKFLOWS = sorted((EXAMPLES / "github-actions").glob("*.yml"))
PIPELINE = EXAMPLES / "gitlab" / ".gitlab-ci.yml"
INSTALL = re.compile(r"pip install\b.*\bpoolform\b")


def _steps(path: Path) -> list[dict[str, Any]]:
    workflow = YAML(typ="safe").load(path.read_text())
    return [step for job in workflow["jobs"].values() for step in job["steps"]]


def _installs(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if INSTALL.search(line)]


def test_every_action_is_pinned_to_a_full_commit_sha() -> None:
    used = [
        (path.name, step["uses"]) for path in WORKFLOWS for step in _steps(path) if "uses" in step
    ]
    assert used
    loose = [
        (name, uses)
        for name, uses in used
        if not re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", uses)
    ]
    assert not loose, f"actions not pinned to a commit SHA: {loose}"


def test_every_checkout_keeps_no_token() -> None:
    for path in WORKFLOWS:
        for step in _steps(path):
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert (step.get("with") or {}).get("persist-credentials") is False, path.name


def test_every_job_installs_this_poolform_release() -> None:
    pinned = f'"poolform[aws,gcp,postgres]=={version("poolform")}"'
    installs = [line for path in [*WORKFLOWS, PIPELINE] for line in _installs(path.read_text())]
    assert len(installs) == len(WORKFLOWS) + 1
    for line in installs:
        assert line.endswith(pinned), line
