"""The CI scripts on their own, against the fake APIs: finding their comment again across pages,
fetching the reviewed plan (the token never follows the redirect to blob storage), refusing
clearly, and writing Markdown that poolform's error output cannot break. No poolform needed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.ci.fake_github import BOT, REPO, FakeGitHub
from tests.ci.fake_gitlab import BOT_ID, PROJECT_ID, FakeGitLab, Job
from tests.ci.readme_example import scripts_module
from tests.ci.team import EXAMPLES

SCRIPTS = EXAMPLES / "scripts"
COMMIT = "a" * 40
MERGED = "b" * 40


def ci(
    step: str, workdir: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPTS / "ci.py"), step, *args],
        cwd=workdir,
        env={"PATH": os.environ["PATH"], "POOLFORM_DIR": "capacity", **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def github_env(github: FakeGitHub, **more: str) -> dict[str, str]:
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": github.url,
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_TOKEN": github.token,
        "GITHUB_RUN_ID": "99",
        **more,
    }


def gitlab_env(gitlab: FakeGitLab, **more: str) -> dict[str, str]:
    return {
        "GITLAB_CI": "true",
        "CI_API_V4_URL": f"{gitlab.url}/api/v4",
        "CI_PROJECT_ID": PROJECT_ID,
        "POOLFORM_GITLAB_TOKEN": gitlab.token,
        "CI_JOB_URL": f"{gitlab.url}/-/jobs/1",
        **more,
    }


PLAN_COMMENT = (
    "<!-- poolform-ci: plan capacity -->\n### poolform plan: 1 to add\n\n"
    f"For `pull request #1`, computed at commit `{COMMIT}` against state serial 4.\n"
)


def reviewed_on_github(github: FakeGitHub) -> int:
    """A pull request at COMMIT with the workflow's plan comment, as its plan job leaves it."""
    number = github.open_thread("change", pull=True, head=COMMIT)
    github.human_comment(number, PLAN_COMMENT, author=BOT)
    return number


def planned(workdir: Path, markdown: str) -> Path:
    (workdir / "poolform-plan.status").write_text("0\n")
    (workdir / "poolform-plan.md").write_text(markdown)
    return workdir


def test_the_plan_comment_is_found_on_a_later_page_and_edited_not_posted_again(
    tmp_path: Path, github: FakeGitHub
) -> None:
    number = github.open_thread("change", pull=True, head=COMMIT)
    for reply in range(150):  # a long discussion before the first plan
        github.human_comment(number, f"reply {reply}")
    env = github_env(github, POOLFORM_PR=str(number), POOLFORM_COMMIT=COMMIT)
    first = ci("plan-comment", planned(tmp_path, "### poolform plan: 1 to add\n"), env)
    assert first.returncode == 0, first.stderr
    github.human_comment(number, "looks good")
    second = ci("plan-comment", planned(tmp_path, "### poolform plan: 2 to add\n"), env)
    assert second.returncode == 0, second.stderr
    ours = [c for c in github.threads[number].comments if "poolform-ci: plan" in c.body]
    assert len(ours) == 1 and ours[0].edits == 1
    assert "2 to add" in ours[0].body and "1 to add" not in ours[0].body
    assert len(github.threads[number].comments) == 152


def test_a_comment_that_quotes_the_marker_is_not_taken_for_the_workflows_own(
    tmp_path: Path, github: FakeGitHub
) -> None:
    number = github.open_thread("change", pull=True, head=COMMIT)
    github.human_comment(number, "> <!-- poolform-ci: plan capacity -->\n> old plan\n\nwhy?")
    env = github_env(github, POOLFORM_PR=str(number), POOLFORM_COMMIT=COMMIT)
    done = ci("plan-comment", planned(tmp_path, "### poolform plan: 1 to add\n"), env)
    assert done.returncode == 0, done.stderr
    human, ours = github.threads[number].comments
    assert human.edits == 0 and ours.body.startswith("<!-- poolform-ci: plan capacity -->")


def test_a_comment_whose_post_failed_is_not_posted_again_in_the_same_run(
    tmp_path: Path, github: FakeGitHub
) -> None:
    number = github.open_thread("change", pull=True, head=COMMIT)
    github.outages["POST"] = [502]  # the comment may have been made before the answer was lost
    env = github_env(github, POOLFORM_PR=str(number), POOLFORM_COMMIT=COMMIT)
    done = ci("plan-comment", planned(tmp_path, "### poolform plan: 1 to add\n"), env)
    assert done.returncode == 1 and "502" in done.stderr
    assert [r.method for r in github.requests].count("POST") == 1


def test_gitlab_notes_skip_system_notes_and_are_edited_in_place(
    tmp_path: Path, gitlab: FakeGitLab
) -> None:
    iid = gitlab.open_merge_request(COMMIT)
    env = gitlab_env(gitlab, CI_MERGE_REQUEST_IID=str(iid), CI_COMMIT_SHA=COMMIT)
    for plan in ("1 to add", "2 to add", "3 to add"):
        done = ci("plan-comment", planned(tmp_path, f"### poolform plan: {plan}\n"), env)
        assert done.returncode == 0, done.stderr
        gitlab.push(iid, COMMIT)  # a system note between the runs
    ours = [n for n in gitlab.merge_requests[iid].notes if not n.system]
    assert len(ours) == 1 and ours[0].edits == 2 and "3 to add" in ours[0].body


def test_the_reviewed_plan_is_fetched_from_the_artifact_without_sending_the_token_to_storage(
    tmp_path: Path, github: FakeGitHub
) -> None:
    number = reviewed_on_github(github)
    github.upload_artifact(
        f"poolform-plan-capacity-pr{number}-{COMMIT[:39]}0", {"plan.bin": b"other"}, 1, COMMIT
    )
    github.upload_artifact(
        f"poolform-plan-capacity-pr{number}-{COMMIT}", {"plan.bin": b"reviewed"}, 2, COMMIT
    )
    github.merge(number, MERGED)
    done = ci("fetch-plan", tmp_path, github_env(github, GITHUB_SHA=MERGED))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "plan.bin").read_bytes() == b"reviewed"
    assert json.loads((tmp_path / "poolform-review.json").read_text())["number"] == number
    blob = [r for r in github.requests if r.path.startswith("/blob/")]
    assert len(blob) == 1 and "authorization" not in blob[0].headers


def test_an_expired_plan_applies_nothing_and_the_pull_request_is_told(
    tmp_path: Path, github: FakeGitHub
) -> None:
    number = reviewed_on_github(github)
    github.upload_artifact(
        f"poolform-plan-capacity-pr{number}-{COMMIT}", {"plan.bin": b"old"}, 2, COMMIT
    )
    github.artifacts[-1].expired = True
    github.merge(number, MERGED)
    done = ci("fetch-plan", tmp_path, github_env(github, GITHUB_SHA=MERGED))
    assert done.returncode == 1
    assert "expired" in done.stderr and "Nothing was applied; re-plan" in done.stderr
    assert not (tmp_path / "plan.bin").exists()
    (note,) = [c for c in github.threads[number].comments if "poolform-ci: apply" in c.body]
    assert note.body.startswith("<!-- poolform-ci: apply capacity -->")
    assert "no reviewed plan" in note.body


def test_gitlab_fetches_the_plan_job_artifact_of_the_merge_requests_last_commit(
    tmp_path: Path, gitlab: FakeGitLab
) -> None:
    iid = gitlab.open_merge_request(COMMIT)
    gitlab.human_note(iid, PLAN_COMMENT, author=BOT_ID)  # the plan job's note
    older = gitlab.new_pipeline("c" * 40, iid)
    older.jobs.append(Job(gitlab.next_id(), "poolform-plan", "success", {"plan.bin": b"older"}))
    latest = gitlab.new_pipeline(COMMIT, iid)
    latest.jobs.append(Job(gitlab.next_id(), "poolform-plan", "success", {"plan.bin": b"reviewed"}))
    gitlab.merge(iid, MERGED)
    done = ci("fetch-plan", tmp_path, gitlab_env(gitlab, CI_COMMIT_SHA=MERGED))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "plan.bin").read_bytes() == b"reviewed"


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"GITHUB_TOKEN": ""}, "GITHUB_TOKEN is not set"),
        ({"GITHUB_TOKEN": "wrong"}, "401 Bad credentials (check the token"),
        ({"POOLFORM_PR": "abc"}, "no pull request number"),
        ({"GITHUB_ACTIONS": ""}, "neither GITHUB_ACTIONS nor GITLAB_CI"),
    ],
)
def test_a_misconfigured_job_fails_with_one_clear_line(
    tmp_path: Path, github: FakeGitHub, change: dict[str, str], said: str
) -> None:
    number = github.open_thread("change", pull=True, head=COMMIT)
    env = {**github_env(github, POOLFORM_PR=str(number)), **change}
    done = ci("plan-comment", planned(tmp_path, "plan"), env)
    assert done.returncode == 1
    assert said in done.stderr and "Traceback" not in done.stderr
    assert not github.threads[number].comments


def test_a_drift_check_that_failed_leaves_the_issue_alone(
    tmp_path: Path, github: FakeGitHub
) -> None:
    done = ci("drift-issue", tmp_path, github_env(github), "--status", "1")
    assert done.returncode == 1 and "an error, not a finding" in done.stderr
    assert not github.issues()


def test_error_output_cannot_close_its_fence_or_the_marker() -> None:
    bodies = scripts_module("bodies")
    context = bodies.Context("odd --> dir", COMMIT, "")
    nasty = "error: ````` fence ``` and <!-- --> and </details>\n"
    body = bodies.plan_error_comment(context, 1, nasty)
    first_line = body.splitlines()[0]
    assert first_line.count("-->") == 1 and first_line.endswith("-->")
    fence = "`" * 6
    assert f"{fence}text\n{nasty.strip()}\n{fence}" in body
    assert bodies.plan_error_comment(context, None, "").count("```") == 0


def test_gitlab_cloud_credentials_come_from_the_jobs_id_tokens(tmp_path: Path) -> None:
    script = SCRIPTS / "gitlab-cloud-credentials"
    shown = (
        f'. "{script}"; echo "AWS=${{AWS_ROLE_ARN:-}} TOKEN=$(cat "${{AWS_WEB_IDENTITY_TOKEN_FILE:-/dev/null}}")";'
        ' echo "GCP=${GOOGLE_APPLICATION_CREDENTIALS:-}"'
    )
    base = {"PATH": os.environ["PATH"], "CI_BUILDS_DIR": str(tmp_path), "CI_JOB_ID": "7"}
    nothing = subprocess.run(
        ["bash", "-c", shown], env=base, capture_output=True, text=True, check=True
    )
    assert nothing.stdout.split() == ["AWS=", "TOKEN=", "GCP="]

    configured = {
        **base,
        "POOLFORM_ROLE": "apply",
        "POOLFORM_AWS_PLAN_ROLE_ARN": "arn:aws:iam::1:role/plan",
        "POOLFORM_AWS_APPLY_ROLE_ARN": "arn:aws:iam::1:role/apply",
        "POOLFORM_AWS_ID_TOKEN": "aws.jwt.token",
        "POOLFORM_GCP_WORKLOAD_IDENTITY_PROVIDER": "projects/9/locations/global/workloadIdentityPools/p/providers/gl",
        "POOLFORM_GCP_APPLY_SERVICE_ACCOUNT": "apply@proj.iam.gserviceaccount.com",
        "POOLFORM_GCP_ID_TOKEN": "gcp.jwt.token",
    }
    done = subprocess.run(
        ["bash", "-c", shown], env=configured, capture_output=True, text=True, check=True
    )
    aws, token, gcp = done.stdout.split()
    assert aws == "AWS=arn:aws:iam::1:role/apply" and token == "TOKEN=aws.jwt.token"
    config = json.loads(Path(gcp.removeprefix("GCP=")).read_text())
    assert config["audience"] == (
        "//iam.googleapis.com/projects/9/locations/global/workloadIdentityPools/p/providers/gl"
    )
    assert Path(config["credential_source"]["file"]).read_text() == "gcp.jwt.token"
    assert config["service_account_impersonation_url"].endswith(
        "apply@proj.iam.gserviceaccount.com:generateAccessToken"
    )
    bad = subprocess.run(
        ["bash", "-c", f'. "{script}"'],
        env={**base, "POOLFORM_ROLE": "root"},
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 1 and "POOLFORM_ROLE must be plan or apply" in bad.stderr
