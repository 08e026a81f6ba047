"""The apply role's session and the merge job (examples/ci). GitHub's merge job asks AWS for
credentials that last as long as the job may run (`role-duration-seconds`), so that an apply
which first waited for the state lock does not lose them half-way through a rolling change. AWS
refuses a session longer than the role's maximum, one hour unless raised, and the README never
said to raise it: an adopter following it had every merge fail at its credentials step."""

from __future__ import annotations

from typing import Any

from ruamel.yaml import YAML

from tests.ci.team import EXAMPLES

README = " ".join((EXAMPLES / "README.md").read_text().split())


def _merge_job() -> dict[str, Any]:
    workflow = YAML(typ="safe").load(
        (EXAMPLES / "github-actions" / "poolform-merge.yml").read_text()
    )
    (job,) = workflow["jobs"].values()
    found: dict[str, Any] = job
    return found


def test_the_apply_roles_session_lasts_the_merge_job_and_the_readme_says_to_allow_it() -> None:
    job = _merge_job()
    (asked,) = [
        step["with"]["role-duration-seconds"]
        for step in job["steps"]
        if "configure-aws-credentials" in str(step.get("uses", ""))
    ]
    assert asked >= job["timeout-minutes"] * 60
    assert f"--max-session-duration {asked}`" in README
