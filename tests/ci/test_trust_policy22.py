"""The cloud trust that examples/ci/README.md tells an adopter to set up lets in the jobs the
workflows run, and only those. GitHub writes a job's environment into its OIDC token's subject
(`repo:ORG/REPO:environment:NAME`) in place of its branch: the merge job runs in an environment
(its secrets reach `main` only), so an apply role trusting `ref:refs/heads/main` would refuse
the very job that applies. The apply identity must be granted to that subject alone, never to
the whole repository, whose pull requests run their own workflow files."""

from __future__ import annotations

import json
import re
from typing import Any

from ruamel.yaml import YAML

from tests.ci.team import EXAMPLES

README = (EXAMPLES / "README.md").read_text()
REPOSITORY = "acme/capacity"  # the README's example repository


def _jobs(name: str) -> dict[str, Any]:
    workflow = YAML(typ="safe").load((EXAMPLES / "github-actions" / name).read_text())
    jobs: dict[str, Any] = workflow["jobs"]
    return jobs


def _apply_trust_policy() -> dict[str, Any]:
    (block,) = re.findall(r"```json\n(.*?)```", README, flags=re.S)
    policy: dict[str, Any] = json.loads(block)
    return policy


def test_the_apply_role_trusts_the_subject_of_the_merge_job() -> None:
    (job,) = _jobs("poolform-merge.yml").values()
    subject = f"repo:{REPOSITORY}:environment:{job['environment']}"
    condition = _apply_trust_policy()["Condition"]["StringEquals"]
    assert condition["token.actions.githubusercontent.com:sub"] == subject


def test_the_plan_jobs_name_no_environment_so_their_subjects_are_the_ones_the_plan_role_trusts() -> (
    None
):
    for name in ("poolform-pull-request.yml", "poolform-nightly-drift.yml"):
        for job in _jobs(name).values():
            assert "environment" not in job, name
    assert f"`repo:{REPOSITORY}:pull_request`" in README
    assert f"`repo:{REPOSITORY}:ref:refs/heads/main`" in README


def test_the_gcp_apply_service_account_is_granted_to_the_merge_job_s_subject_only() -> None:
    (job,) = _jobs("poolform-merge.yml").values()
    gcp = README.split("### GCP", 1)[1].split("\n## ", 1)[0]
    assert f"/subject/repo:{REPOSITORY}:environment:{job['environment']}`" in gcp
    assert "the apply service account to the merge job's subject only" in " ".join(gcp.split())
