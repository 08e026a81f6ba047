"""A pull request's life on each code host, driven as the host would: a push runs the pull
request workflow, a merge runs the main branch's, a night runs the scheduled one. Every job
runs the example workflow's own steps (tests/ci/actions.py, tests/ci/gitlab_ci.py)."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tests.ci import actions, gitlab_ci
from tests.ci.fake_github import FakeGitHub, Thread
from tests.ci.fake_gitlab import FakeGitLab, GitLabIssue, MergeRequest
from tests.ci.team import CONFIG, EXAMPLES, Team

WORKFLOWS = EXAMPLES / "github-actions"
PIPELINE = EXAMPLES / "gitlab" / ".gitlab-ci.yml"


@dataclass
class Change:
    """A pull or merge request: its branch, its number and its last commit."""

    branch: str
    number: int
    head: str


class GitHubFlow:
    def __init__(self, team: Team, github: FakeGitHub) -> None:
        self.team = team
        self.github = github
        self.runner = actions.Runner(
            github=github,
            origin=team.origin,
            work=team.tmp / "github-runners",
            environ=team.environ,
            secrets=team.backend.secrets,
            prepare=team.link_cloud,
            token=github.token,
        )
        self.runner.work.mkdir()

    def _run(self, workflow: str, event: actions.Event) -> actions.JobRun:
        fired = [
            path.name
            for path in sorted(WORKFLOWS.glob("*.yml"))
            if actions.triggered(actions.load(path), event)
        ]
        assert fired == [workflow], f"{event.name} started {fired}, expected {workflow}"
        return actions.run_workflow(WORKFLOWS / workflow, event, self.runner)

    def _pull_event(self, change: Change, base: str) -> actions.Event:
        payload = {
            "number": change.number,
            "pull_request": {
                "number": change.number,
                "head": {"sha": change.head, "repo": {"full_name": "acme/capacity"}},
                "base": {"ref": "main"},
            },
        }
        return actions.Event(
            "pull_request",
            change.head,  # (GitHub's test merge commit; the workflow checks out the head)
            f"refs/pull/{change.number}/merge",
            payload,
            self.team.origin.changed(base, change.head),
        )

    def open(self, branch: str, files: dict[str, str | None]) -> tuple[Change, actions.JobRun]:
        base = self.team.origin.head()
        head = self.team.origin.commit(branch, files, f"{branch}: change capacity")
        number = self.github.open_thread(branch, pull=True, head=head)
        change = Change(branch, number, head)
        return change, self._run("poolform-pull-request.yml", self._pull_event(change, base))

    def push(self, change: Change, files: dict[str, str | None]) -> actions.JobRun:
        base = self.team.origin.head()
        change.head = self.team.origin.commit(change.branch, files, f"{change.branch}: more")
        self.github.threads[change.number].head_sha = change.head
        return self._run("poolform-pull-request.yml", self._pull_event(change, base))

    def merge(self, change: Change) -> actions.JobRun:
        before = self.team.origin.head()
        merged = self.team.origin.merge(change.branch)
        self.github.merge(change.number, merged)
        event = actions.Event(
            "push", merged, "refs/heads/main", {}, self.team.origin.changed(before, merged)
        )
        return self._run("poolform-merge.yml", event)

    def push_to_main(self, files: dict[str, str | None]) -> actions.JobRun:
        before = self.team.origin.head()
        sha = self.team.origin.commit("main", files, "straight to main")
        event = actions.Event(
            "push", sha, "refs/heads/main", {}, self.team.origin.changed(before, sha)
        )
        return self._run("poolform-merge.yml", event)

    def night(self) -> actions.JobRun:
        sha = self.team.origin.head()
        return self._run(
            "poolform-nightly-drift.yml",
            actions.Event("schedule", sha, "refs/heads/main", {"schedule": "17 3 * * *"}),
        )

    def thread(self, change: Change) -> Thread:
        return self.github.threads[change.number]

    def artifact(self, name: str) -> bytes:
        found = [a for a in self.github.artifacts if a.name == name]
        assert len(found) == 1, f"{len(found)} artifacts named {name}"
        with zipfile.ZipFile(io.BytesIO(found[0].archive)) as archive:
            return archive.read("plan.bin")


class GitLabFlow:
    def __init__(self, team: Team, gitlab: FakeGitLab) -> None:
        self.team = team
        self.gitlab = gitlab
        self.runner = gitlab_ci.GitLabRunner(
            gitlab=gitlab,
            origin=team.origin,
            work=team.tmp / "gitlab-runners",
            environ=team.environ,
            project_variables={"POOLFORM_GITLAB_TOKEN": gitlab.token, **team.backend.secrets},
            prepare=team.link_cloud,
        )
        self.runner.work.mkdir()

    def _run(self, pipeline: gitlab_ci.Pipeline, job: str) -> gitlab_ci.JobRun:
        runs = gitlab_ci.run_pipeline(PIPELINE, pipeline, self.runner)
        assert [run.name for run in runs] == [job], [run.name for run in runs]
        return runs[0]

    def open(self, branch: str, files: dict[str, str | None]) -> tuple[Change, gitlab_ci.JobRun]:
        head = self.team.origin.commit(branch, files, f"{branch}: change capacity")
        change = Change(branch, self.gitlab.open_merge_request(head), head)
        return change, self._mr_pipeline(change)

    def _mr_pipeline(self, change: Change) -> gitlab_ci.JobRun:
        changed = self.team.origin.changed(self.team.origin.head(), change.head)
        pipeline = gitlab_ci.Pipeline(
            "merge_request_event", change.head, None, change.number, changed
        )
        return self._run(pipeline, "poolform-plan")

    def push(self, change: Change, files: dict[str, str | None]) -> gitlab_ci.JobRun:
        change.head = self.team.origin.commit(change.branch, files, f"{change.branch}: more")
        self.gitlab.push(change.number, change.head)
        return self._mr_pipeline(change)

    def merge(self, change: Change) -> gitlab_ci.JobRun:
        before = self.team.origin.head()
        merged = self.team.origin.merge(change.branch)
        self.gitlab.merge(change.number, merged)
        changed = self.team.origin.changed(before, merged)
        return self._run(
            gitlab_ci.Pipeline("push", merged, "main", None, changed), "poolform-apply"
        )

    def night(self) -> gitlab_ci.JobRun:
        pipeline = gitlab_ci.Pipeline(
            "schedule", self.team.origin.head(), "main", variables={"POOLFORM_SCHEDULE": "drift"}
        )
        return self._run(pipeline, "poolform-drift")

    def request(self, change: Change) -> MergeRequest:
        return self.gitlab.merge_requests[change.number]

    def artifact(self, change: Change) -> bytes:
        found = [
            job.artifacts["plan.bin"]
            for pipeline in self.gitlab.pipelines
            if pipeline.sha == change.head
            for job in pipeline.jobs
            if "plan.bin" in job.artifacts
        ]
        assert len(found) == 1, f"{len(found)} plan artifacts for {change.head}"
        return found[0]

    def issues(self) -> list[GitLabIssue]:
        return list(self.gitlab.issues.values())


__all__ = ["CONFIG", "Change", "GitHubFlow", "GitLabFlow", "Path"]
