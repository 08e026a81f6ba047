"""The CI steps that talk to the code host, on GitHub Actions and GitLab CI alike.

    python3 ci.py plan-comment          post or update the review comment of the plan
    python3 ci.py fetch-plan            download the plan reviewed on the merged pull request
    python3 ci.py check-plan            refuse a plan file that is not the plan its comment shows
    python3 ci.py apply-note --status N say on the merged pull request what the apply did
    python3 ci.py drift-issue --status N open, update or close the drift issue
    python3 ci.py artifact-name         print the name of the pull request's plan artifact

The shell scripts beside this file run poolform and leave its output in the working directory
(poolform-plan.status/.md/.err, poolform-review.json, poolform-shown.md, poolform-apply.log,
poolform-drift.md);
this reads those files and the CI's own variables:

    POOLFORM_DIR        the configuration directory (default capacity)
    POOLFORM_PR         the pull request's number (GitHub); GitLab's CI_MERGE_REQUEST_IID
    POOLFORM_COMMIT     the commit reviewed (default GITHUB_SHA or CI_COMMIT_SHA)

Exit 0 when done, 1 with a one-line reason on stderr otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path

import bodies
from bodies import Context
from forge import PLAN_FILE, Forge, ForgeError, GitHub, GitLab, Review, forge_from

REVIEW_FILE = "poolform-review.json"
SHOWN_FILE = "poolform-shown.md"  # `poolform show plan.bin --markdown`, for check-plan


def context_from(environ: Mapping[str, str], *, reviewed: bool = True) -> Context:
    """`reviewed`: the commit a review is about (a pull request's head) rather than this run's."""
    commit = environ.get("GITHUB_SHA") or environ.get("CI_COMMIT_SHA") or ""
    if reviewed:
        commit = environ.get("POOLFORM_COMMIT") or commit
    if environ.get("GITHUB_RUN_ID"):
        server = environ.get("GITHUB_SERVER_URL") or "https://github.com"
        run_url = (
            f"{server}/{environ.get('GITHUB_REPOSITORY')}/actions/runs/{environ['GITHUB_RUN_ID']}"
        )
    else:
        run_url = environ.get("CI_JOB_URL", "")
    return Context(environ.get("POOLFORM_DIR") or "capacity", commit, run_url)


def review_number(environ: Mapping[str, str]) -> int:
    raw = environ.get("POOLFORM_PR") or environ.get("CI_MERGE_REQUEST_IID") or ""
    if not raw.isdigit():
        raise ForgeError(
            "no pull request number: set POOLFORM_PR (GitHub) or run in a merge request "
            "pipeline (GitLab sets CI_MERGE_REQUEST_IID)"
        )
    return int(raw)


def upsert_note(forge: Forge, review: int, marker: str, body: str) -> str:
    """Edit the note that starts with `marker`, or add one: never a second one. (Starts with:
    someone quoting or pasting the comment in their own is not taken for it.)"""
    for note in forge.notes(review):
        if note.body.startswith(marker):
            forge.edit_note(review, note.id, body)
            return f"updated the comment on {forge.review_name(review)}"
    forge.add_note(review, body)
    return f"commented on {forge.review_name(review)}"


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""


def plan_comment(forge: Forge, environ: Mapping[str, str], workdir: Path) -> str:
    context = context_from(environ)
    number = review_number(environ)
    # A run of an older commit (re-run by hand, or finishing after a newer push's) must not
    # replace the newer commit's plan in the comment: the merge applies the last commit's plan,
    # and the comment is what reviewers approve.
    head = forge.review_head(number)
    if context.commit and head != context.commit:
        return (
            f"{forge.review_name(number)} is now at commit {bodies.short(head)}: this run's plan "
            f"of {bodies.short(context.commit)} is outdated and was not posted"
        )
    raw_status = _read(workdir / "poolform-plan.status").strip()
    status = int(raw_status) if raw_status.lstrip("-").isdigit() else None
    if status == 0:
        if isinstance(forge, GitHub):
            name = GitHub.artifact_name(context.directory, number, context.commit)
            artifact = f"the artifact `{name}`"
        else:
            artifact = "this job's artifact"
        body = bodies.plan_comment(context, _read(workdir / "poolform-plan.md"), artifact)
    else:
        body = bodies.plan_error_comment(context, status, _read(workdir / "poolform-plan.err"))
    return upsert_note(forge, number, bodies.marker("plan", context.directory), body)


def fetch_plan(forge: Forge, environ: Mapping[str, str], workdir: Path) -> str:
    context = context_from(environ, reviewed=False)
    review = forge.merged_review(context.commit)
    if review is None:
        raise ForgeError(
            f"commit {bodies.short(context.commit)} came from no single merged pull request, so "
            "there is no reviewed plan to apply; nothing was applied. Changes to "
            f"{context.directory}/ must come through a pull request: re-plan there."
        )
    name = forge.review_name(review.number)
    refuse_edited_comment(forge, review, name, context)
    plan = forge.reviewed_plan(review)
    if plan is None:
        reason = (
            f"No saved plan of {name} at its last commit `{bodies.short(review.head_sha)}` was "
            "found: its plan job failed, never ran for that commit, or its artifact expired."
        )
        upsert_note(
            forge,
            review.number,
            bodies.marker("apply", context.directory),
            bodies.missing_plan_note(context, name, reason),
        )
        raise ForgeError(f"{reason} Nothing was applied; re-plan.")
    (workdir / PLAN_FILE).write_bytes(plan)
    record = {"number": review.number, "head_sha": review.head_sha, "name": name}
    (workdir / REVIEW_FILE).write_text(json.dumps(record) + "\n")
    return f"fetched the plan reviewed on {name} (commit {bodies.short(review.head_sha)})"


def check_plan(forge: Forge, environ: Mapping[str, str], workdir: Path) -> str:
    """The plan file fetched must be the plan its comment shows, which reviewers approved: the
    pull request's job wrote both, running the pull request's own scripts, so a changed
    `plan-for-review` could post one plan and save another (a destroy) for the merge. The
    shell step leaves `poolform show plan.bin --markdown` in SHOWN_FILE."""
    context = context_from(environ, reviewed=False)
    record = json.loads((workdir / REVIEW_FILE).read_text())
    number, name = int(record["number"]), str(record["name"])
    mark = bodies.marker("plan", context.directory)
    comment = next((n for n in forge.notes(number) if n.body.startswith(mark)), None)
    shown = _read(workdir / SHOWN_FILE)
    if comment is not None and bodies.shows_plan(comment.body, context.directory, shown):
        return f"the plan file is the plan shown on {name}"
    reason = (
        f"The plan file saved for {name} is not the plan its comment shows (`poolform show "
        "plan.bin --markdown` differs): reviewers did not see the plan the merge would apply."
    )
    upsert_note(
        forge,
        number,
        bodies.marker("apply", context.directory),
        bodies.missing_plan_note(context, name, reason, "the plan file is not the reviewed plan"),
    )
    raise ForgeError(f"{reason} Nothing was applied; re-plan.")


def refuse_edited_comment(forge: Forge, review: Review, name: str, context: Context) -> None:
    """The plan comment is what reviewers approved: when it is gone (deleted, perhaps for a
    look-alike someone else posted), is of another commit than the saved plan, or someone else
    edited it last (GitHub lets anyone with write access edit or delete any comment), the
    approval may be of another text than the saved plan, so nothing is applied."""
    mark = bodies.marker("plan", context.directory)
    comment = next((n for n in forge.notes(review.number) if n.body.startswith(mark)), None)
    if comment is None:
        reason = f"{name} has no plan comment of this workflow: reviewers did not see its plan."
    elif bodies.short(review.head_sha) not in comment.body:  # saved the plan, failed to post it
        reason = (
            f"The plan comment on {name} is not of its last commit "
            f"`{bodies.short(review.head_sha)}`: reviewers did not see the plan saved for it."
        )
    else:
        editor = forge.foreign_editor(comment)
        if editor is None:
            return
        reason = (
            f"The plan comment on {name} was last edited by {editor}, not by this workflow: "
            "the plan reviewers approved may not be the plan saved for the merge."
        )
    upsert_note(
        forge,
        review.number,
        bodies.marker("apply", context.directory),
        bodies.missing_plan_note(context, name, reason, "the plan comment is not the workflow's"),
    )
    raise ForgeError(f"{reason} Nothing was applied; re-plan.")


def apply_note(forge: Forge, environ: Mapping[str, str], workdir: Path, status: int) -> str:
    context = context_from(environ, reviewed=False)
    try:
        record = json.loads((workdir / REVIEW_FILE).read_text())
    except (OSError, ValueError):
        return "no reviewed pull request recorded (fetch-plan did not finish): no note posted"
    review = Review(int(record["number"]), str(record["head_sha"]))
    body = bodies.apply_note(
        context, status, _read(workdir / "poolform-apply.log"), forge.review_name(review.number)
    )
    return upsert_note(forge, review.number, bodies.marker("apply", context.directory), body)


def drift_issue(forge: Forge, environ: Mapping[str, str], workdir: Path, status: int) -> str:
    context = context_from(environ, reviewed=False)
    if status not in (0, 2):
        raise ForgeError(
            f"poolform drift exited {status} (an error, not a finding): the drift issue is left "
            "as it was"
        )
    mark = bodies.marker("drift", context.directory)
    found = next((issue for issue in forge.open_issues() if issue.body.startswith(mark)), None)
    if status == 2:
        body = bodies.drift_issue(context, _read(workdir / "poolform-drift.md"))
        if found is None:
            forge.create_issue(bodies.drift_title(context.directory), body)
            return "drift found: opened an issue"
        forge.edit_issue(found.number, body)
        return f"drift found: updated issue {found.number}"
    if found is None:
        return "no drift, no open drift issue"
    forge.close_issue(found.number, bodies.drift_gone(context))
    return f"no drift: closed issue {found.number}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="ci.py", description="The CI steps that talk to the code host."
    )
    parser.add_argument(
        "step",
        choices=[
            "plan-comment",
            "fetch-plan",
            "check-plan",
            "apply-note",
            "drift-issue",
            "artifact-name",
        ],
    )
    parser.add_argument("--status", type=int, default=0, help="poolform's exit status")
    args = parser.parse_args(argv)
    environ, workdir = os.environ, Path.cwd()
    try:
        if args.step == "artifact-name":  # no API call: the plan step has no token
            context = context_from(environ)
            print(GitHub.artifact_name(context.directory, review_number(environ), context.commit))
            return 0
        forge = forge_from(environ)
        if args.step == "plan-comment":
            said = plan_comment(forge, environ, workdir)
        elif args.step == "fetch-plan":
            said = fetch_plan(forge, environ, workdir)
        elif args.step == "check-plan":
            said = check_plan(forge, environ, workdir)
        elif args.step == "apply-note":
            said = apply_note(forge, environ, workdir, args.status)
        else:
            said = drift_issue(forge, environ, workdir, args.status)
    except ForgeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except (KeyError, TypeError, AttributeError) as exc:  # an answer of another shape
        print(f"error: unexpected answer from the code host's API ({exc!r})", file=sys.stderr)
        return 1
    print(said, file=sys.stderr)
    return 0


__all__ = ["GitHub", "GitLab", "main"]

if __name__ == "__main__":
    sys.exit(main())
