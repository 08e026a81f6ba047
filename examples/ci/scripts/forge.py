"""The code hosts' REST APIs, as far as the CI scripts use them: GitHub and GitLab.

Standard library only (the runner has Python because poolform needs it; curl, jq and gh are not
on every image). Each host is reached through the variables its own CI sets: GitHub Actions'
GITHUB_API_URL and GITHUB_REPOSITORY with the job's GITHUB_TOKEN; GitLab CI's CI_API_V4_URL and
CI_PROJECT_ID with a project access token in POOLFORM_GITLAB_TOKEN (a job token may not write
notes or issues).

The notes and issues listed are only those the token's own user wrote: anyone may post a
comment or open an issue that starts with a workflow's marker, and one taken for the
workflow's own would get the plan written into it, then be edited back by its author to show
another plan while the real one is merged. On GitHub that user is `github-actions[bot]` (the
job's GITHUB_TOKEN), or POOLFORM_CI_AUTHOR when the token is another account's or app's; on
GitLab, the project access token's bot user, as GET /user names it.
"""

from __future__ import annotations

import io
import json
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

PAGE = 100
# 5xx and dropped connections: the hosts' APIs have short hiccups. A POST (a new comment or
# issue) is never repeated: it may have been made before the answer was lost, and a second one
# would be the duplicate the markers are there to prevent (the next run finds and edits it).
ATTEMPTS = 3
PLAN_FILE = "plan.bin"


class ForgeError(Exception):
    """A request the host refused or could not answer, named by method and path."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Note:
    id: int
    body: str
    node_id: str = ""  # GitHub's GraphQL id


@dataclass(frozen=True)
class Issue:
    number: int
    body: str


@dataclass(frozen=True)
class Review:
    """A merged pull request (GitHub) or merge request (GitLab) and its last commit."""

    number: int
    head_sha: str


class Forge(Protocol):
    def review_name(self, number: int) -> str: ...
    def review_head(self, number: int) -> str: ...
    def notes(self, review: int) -> Iterator[Note]: ...
    def foreign_editor(self, note: Note) -> str | None: ...
    def add_note(self, review: int, body: str) -> None: ...
    def edit_note(self, review: int, note: int, body: str) -> None: ...
    def merged_review(self, commit: str) -> Review | None: ...
    def reviewed_plan(self, review: Review) -> bytes | None: ...
    def open_issues(self) -> Iterator[Issue]: ...
    def create_issue(self, title: str, body: str) -> None: ...
    def edit_issue(self, number: int, body: str) -> None: ...
    def close_issue(self, number: int, comment: str) -> None: ...


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # followed by hand, without the token (it must not go to blob storage)


class Http:
    """JSON over HTTPS with a token, a few retries, and pages of PAGE items."""

    def __init__(self, base: str, headers: Mapping[str, str], host: str) -> None:
        self.base = base.rstrip("/")
        self.headers = dict(headers)
        self.host = host
        self._opener = urllib.request.build_opener(_NoRedirect)

    def call(self, method: str, path: str, body: object = None, *, query: bool = False) -> Any:
        """`query`: a POST that changes nothing (GraphQL), retried like a GET."""
        data = self.raw(method, path, body, query=query)
        try:
            return json.loads(data) if data else None
        except ValueError:
            raise ForgeError(f"{self.host} API {method} {path}: the answer is not JSON") from None

    def pages(self, path: str) -> Iterator[Any]:
        separator = "&" if "?" in path else "?"
        page = 1
        while True:
            items = self.call("GET", f"{path}{separator}per_page={PAGE}&page={page}")
            yield from items
            if len(items) < PAGE:
                return
            page += 1

    def raw(self, method: str, path: str, body: object = None, *, query: bool = False) -> bytes:
        data = None if body is None else json.dumps(body).encode()
        headers = {**self.headers, **({"Content-Type": "application/json"} if data else {})}
        request = urllib.request.Request(
            self.base + path, data=data, headers=headers, method=method
        )
        attempts = 1 if method == "POST" and not query else ATTEMPTS
        for attempt in range(1, attempts + 1):
            try:
                with self._opener.open(request, timeout=60) as response:
                    return bytes(response.read())
            except urllib.error.HTTPError as exc:
                if exc.code in (301, 302, 303, 307, 308) and exc.headers.get("Location"):
                    return _download(
                        urllib.parse.urljoin(self.base + path, exc.headers["Location"])
                    )
                if exc.code < 500 or attempt == attempts:
                    raise ForgeError(self._refusal(method, path, exc), exc.code) from None
            except OSError as exc:
                if attempt == attempts:
                    raise ForgeError(f"{self.host} API {method} {path}: {exc}") from None
            time.sleep(2**attempt)
        raise AssertionError("unreachable")

    def _refusal(self, method: str, path: str, exc: urllib.error.HTTPError) -> str:
        try:
            detail = json.loads(exc.read() or b"{}").get("message", "")
        except (ValueError, AttributeError):
            detail = ""
        message = f"{self.host} API {method} {path}: {exc.code} {detail or exc.reason}".rstrip()
        if exc.code in (401, 403):
            message += " (check the token and the job's permissions: see examples/ci/README.md)"
        return message


def _download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            return bytes(response.read())
    except OSError as exc:  # HTTPError is one
        host = urllib.parse.urlsplit(url).netloc
        raise ForgeError(f"downloading from {host}: {exc}") from None


def _required(environ: Mapping[str, str], name: str) -> str:
    value = environ.get(name, "")
    if not value:
        raise ForgeError(f"{name} is not set (the CI job must pass it to the script)")
    return value


class GitHub:
    """Pull request comments, the plan artifacts of pull request runs, and issues."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        token = environ.get("GITHUB_TOKEN") or environ.get("GH_TOKEN") or ""
        if not token:
            raise ForgeError("GITHUB_TOKEN is not set (pass `${{ github.token }}` to the step)")
        self.repo = f"/repos/{_required(environ, 'GITHUB_REPOSITORY')}"
        self.author = environ.get("POOLFORM_CI_AUTHOR") or "github-actions[bot]"
        self.directory = environ.get("POOLFORM_DIR") or "capacity"
        api = environ.get("GITHUB_API_URL") or "https://api.github.com"
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "poolform-ci",
        }
        self.http = Http(api, headers, "GitHub")
        # GitHub Actions sets GITHUB_GRAPHQL_URL (on GitHub Enterprise Server it is not under
        # the REST API's URL).
        self.graphql = Http(
            environ.get("GITHUB_GRAPHQL_URL") or f"{api}/graphql", headers, "GitHub"
        )

    @staticmethod
    def artifact_name(directory: str, number: int, head_sha: str) -> str:
        """The name the pull request workflow's upload step gives the plan file (plan-for-review
        writes it as the step's output `artifact`). It names the configuration directory: two
        configurations' plans of one pull request are two artifacts, and each merge job fetches
        its own (artifact names cannot hold `/`, hence the percent-encoding)."""
        slug = urllib.parse.quote(directory.strip("/") or ".", safe="._-")
        return f"poolform-plan-{slug}-pr{number}-{head_sha}"

    def review_name(self, number: int) -> str:
        return f"pull request #{number}"

    def review_head(self, number: int) -> str:
        """The pull request's last commit, now."""
        return str(self.http.call("GET", f"{self.repo}/pulls/{number}")["head"]["sha"])

    def notes(self, review: int) -> Iterator[Note]:
        for item in self.http.pages(f"{self.repo}/issues/{review}/comments"):
            if self._own(item):
                yield Note(int(item["id"]), str(item.get("body") or ""), str(item["node_id"]))

    def _own(self, item: Mapping[str, Any]) -> bool:
        return bool((item.get("user") or {}).get("login") == self.author)

    def foreign_editor(self, note: Note) -> str | None:
        """Who last edited the workflow's comment, when not the workflow itself: anyone with
        write access may edit any comment. Only GraphQL tells the editor (REST does not);
        it names a bot by its login without `[bot]`."""
        query = "query($id: ID!) { node(id: $id) { ... on IssueComment { editor { login } } } }"
        answer = self.graphql.call(
            "POST", "", {"query": query, "variables": {"id": note.node_id}}, query=True
        )
        if answer.get("errors") or not answer.get("data", {}).get("node"):
            raise ForgeError(f"GitHub GraphQL: comment {note.id}: {answer.get('errors')}")
        editor = answer["data"]["node"].get("editor")
        login = str(editor["login"]) if editor else None
        if login is None or login in (self.author, self.author.removesuffix("[bot]")):
            return None
        return login

    def add_note(self, review: int, body: str) -> None:
        self.http.call("POST", f"{self.repo}/issues/{review}/comments", {"body": body})

    def edit_note(self, review: int, note: int, body: str) -> None:
        self.http.call("PATCH", f"{self.repo}/issues/comments/{note}", {"body": body})

    def merged_review(self, commit: str) -> Review | None:
        pulls = [
            pull
            for pull in self.http.call("GET", f"{self.repo}/commits/{commit}/pulls")
            if pull.get("merged_at")
        ]
        exact = [pull for pull in pulls if pull.get("merge_commit_sha") == commit]
        chosen = exact or pulls
        if len(chosen) != 1:
            return None
        return Review(int(chosen[0]["number"]), str(chosen[0]["head"]["sha"]))

    def reviewed_plan(self, review: Review) -> bytes | None:
        name = urllib.parse.quote(
            self.artifact_name(self.directory, review.number, review.head_sha), safe=""
        )
        found = self.http.call("GET", f"{self.repo}/actions/artifacts?name={name}&per_page={PAGE}")
        for artifact in found.get("artifacts", []):  # newest first
            # Only what a run of the reviewed commit uploaded: any workflow run in the
            # repository may upload an artifact of this name (a branch's own workflow, for
            # someone else's pull request), and the newest would otherwise win.
            run = artifact.get("workflow_run") or {}
            if artifact.get("expired") or run.get("head_sha") != review.head_sha:
                continue
            archive = self.http.raw("GET", f"{self.repo}/actions/artifacts/{artifact['id']}/zip")
            with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
                if PLAN_FILE in zipped.namelist():
                    return zipped.read(PLAN_FILE)
        return None

    def open_issues(self) -> Iterator[Issue]:
        for item in self.http.pages(f"{self.repo}/issues?state=open"):
            if "pull_request" not in item and self._own(item):  # pull requests are there too
                yield Issue(int(item["number"]), str(item.get("body") or ""))

    def create_issue(self, title: str, body: str) -> None:
        self.http.call("POST", f"{self.repo}/issues", {"title": title, "body": body})

    def edit_issue(self, number: int, body: str) -> None:
        self.http.call("PATCH", f"{self.repo}/issues/{number}", {"body": body})

    def close_issue(self, number: int, comment: str) -> None:
        self.http.call("POST", f"{self.repo}/issues/{number}/comments", {"body": comment})
        self.http.call(
            "PATCH",
            f"{self.repo}/issues/{number}",
            {"state": "closed", "state_reason": "completed"},
        )


class GitLab:
    """Merge request notes, the plan job's artifacts of merge request pipelines, and issues."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        token = environ.get("POOLFORM_GITLAB_TOKEN", "")
        if not token:
            raise ForgeError(
                "POOLFORM_GITLAB_TOKEN is not set (a project access token with the api scope, "
                "as a masked CI/CD variable)"
            )
        project = urllib.parse.quote(_required(environ, "CI_PROJECT_ID"), safe="")
        self.project = f"/projects/{project}"
        self.plan_job = environ.get("POOLFORM_PLAN_JOB") or "poolform-plan"
        self._user: int | None = None
        self.http = Http(
            _required(environ, "CI_API_V4_URL"),
            {"PRIVATE-TOKEN": token, "User-Agent": "poolform-ci"},
            "GitLab",
        )

    def review_name(self, number: int) -> str:
        return f"merge request !{number}"

    def review_head(self, number: int) -> str:
        """The merge request's last commit, now."""
        return str(self.http.call("GET", f"{self.project}/merge_requests/{number}")["sha"])

    def notes(self, review: int) -> Iterator[Note]:
        path = f"{self.project}/merge_requests/{review}/notes?sort=asc&order_by=created_at"
        for item in self.http.pages(path):
            if not item.get("system") and self._own(item):
                yield Note(int(item["id"]), str(item.get("body") or ""))

    def foreign_editor(self, note: Note) -> str | None:
        """GitLab's API does not say who edited a note (a Maintainer may edit anyone's): not
        checked here (see examples/ci/README.md)."""
        return None

    def _own(self, item: Mapping[str, Any]) -> bool:
        if self._user is None:
            self._user = int(self.http.call("GET", "/user")["id"])
        return bool((item.get("author") or {}).get("id") == self._user)

    def add_note(self, review: int, body: str) -> None:
        self.http.call("POST", f"{self.project}/merge_requests/{review}/notes", {"body": body})

    def edit_note(self, review: int, note: int, body: str) -> None:
        path = f"{self.project}/merge_requests/{review}/notes/{note}"
        self.http.call("PUT", path, {"body": body})

    def merged_review(self, commit: str) -> Review | None:
        path = f"{self.project}/repository/commits/{commit}/merge_requests"
        merged = [mr for mr in self.http.call("GET", path) if mr.get("state") == "merged"]
        exact = [
            mr
            for mr in merged
            if commit in (mr.get("merge_commit_sha"), mr.get("squash_commit_sha"))
        ]
        chosen = exact or merged
        if len(chosen) != 1:
            return None
        return Review(int(chosen[0]["iid"]), str(chosen[0]["sha"]))

    def reviewed_plan(self, review: Review) -> bytes | None:
        pipelines = self.http.call(
            "GET", f"{self.project}/merge_requests/{review.number}/pipelines"
        )
        for pipeline in pipelines:  # newest first
            if pipeline.get("sha") != review.head_sha:
                continue
            jobs = self.http.call(
                "GET", f"{self.project}/pipelines/{pipeline['id']}/jobs?scope[]=success"
            )
            for job in jobs:
                if job.get("name") == self.plan_job:
                    path = f"{self.project}/jobs/{job['id']}/artifacts/{PLAN_FILE}"
                    try:
                        return self.http.raw("GET", path)
                    except ForgeError as exc:
                        if exc.status != 404:
                            raise
                        # expired or removed: an older run of the same commit may hold one
        return None

    def open_issues(self) -> Iterator[Issue]:
        for item in self.http.pages(f"{self.project}/issues?state=opened"):
            if self._own(item):
                yield Issue(int(item["iid"]), str(item.get("description") or ""))

    def create_issue(self, title: str, body: str) -> None:
        self.http.call("POST", f"{self.project}/issues", {"title": title, "description": body})

    def edit_issue(self, number: int, body: str) -> None:
        self.http.call("PUT", f"{self.project}/issues/{number}", {"description": body})

    def close_issue(self, number: int, comment: str) -> None:
        self.http.call("POST", f"{self.project}/issues/{number}/notes", {"body": comment})
        self.http.call("PUT", f"{self.project}/issues/{number}", {"state_event": "close"})


def forge_from(environ: Mapping[str, str]) -> Forge:
    """The host this job runs on, told by the variable each CI sets."""
    if environ.get("GITHUB_ACTIONS") == "true":
        return GitHub(environ)
    if environ.get("GITLAB_CI") == "true":
        return GitLab(environ)
    raise ForgeError("neither GITHUB_ACTIONS nor GITLAB_CI is true: run this from a CI job")
