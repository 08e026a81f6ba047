"""GitLab's REST API (v4) as the CI scripts use it: merge request notes (system notes among
them), the merge requests of a commit, merge request pipelines and their jobs' artifacts, and
issues. The project access token comes in the PRIVATE-TOKEN header.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tests.ci.fake_http import FakeApi, Request, Response, Route, page_of, route

PROJECT_ID = "4242"
BOT_ID = 77  # the project access token's bot user
HUMAN_ID = 1


@dataclass
class Note:
    id: int
    body: str
    system: bool = False
    edits: int = 0
    author: int = BOT_ID


@dataclass
class MergeRequest:
    iid: int
    sha: str
    state: str = "opened"
    merge_commit_sha: str | None = None
    notes: list[Note] = field(default_factory=list)


@dataclass
class Job:
    id: int
    name: str
    status: str
    artifacts: dict[str, bytes] = field(default_factory=dict)


@dataclass
class Pipeline:
    id: int
    sha: str
    merge_request: int | None
    jobs: list[Job] = field(default_factory=list)


@dataclass
class GitLabIssue:
    iid: int
    title: str
    description: str
    state: str = "opened"
    edits: int = 0
    notes: list[Note] = field(default_factory=list)
    author: int = HUMAN_ID


class FakeGitLab(FakeApi):
    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token
        self.merge_requests: dict[int, MergeRequest] = {}
        self.pipelines: list[Pipeline] = []
        self.issues: dict[int, GitLabIssue] = {}
        self._ids = 5000

    def next_id(self) -> int:
        with self.lock:
            self._ids += 1
            return self._ids

    # --- what the platform does on its own ---

    def open_merge_request(self, sha: str) -> int:
        with self.lock:
            iid = len(self.merge_requests) + 1
            self.merge_requests[iid] = MergeRequest(iid, sha)
            self.merge_requests[iid].notes.append(Note(self.next_id(), "opened", system=True))
            return iid

    def push(self, iid: int, sha: str) -> None:
        with self.lock:
            request = self.merge_requests[iid]
            request.sha = sha
            request.notes.append(Note(self.next_id(), "added 1 commit", system=True))

    def human_note(self, iid: int, body: str, author: int = HUMAN_ID) -> None:
        with self.lock:
            self.merge_requests[iid].notes.append(Note(self.next_id(), body, author=author))

    def merge(self, iid: int, merge_sha: str) -> None:
        with self.lock:
            request = self.merge_requests[iid]
            request.state, request.merge_commit_sha = "merged", merge_sha

    def new_pipeline(self, sha: str, merge_request: int | None) -> Pipeline:
        with self.lock:
            pipeline = Pipeline(self.next_id(), sha, merge_request)
            self.pipelines.append(pipeline)
            return pipeline

    def open_issue(self, title: str, description: str) -> int:
        with self.lock:
            iid = len(self.issues) + 1
            self.issues[iid] = GitLabIssue(iid, title, description)
            return iid

    # --- the API ---

    def authorized(self, request: Request) -> bool:
        return request.headers.get("private-token") == self.token

    def routes(self) -> list[Route]:
        project = rf"/api/v4/projects/{PROJECT_ID}"
        return [
            route("GET", r"/api/v4/user", self._user),
            route("GET", rf"{project}/merge_requests/(\d+)", self._merge_request),
            route("GET", rf"{project}/merge_requests/(\d+)/notes", self._notes),
            route("POST", rf"{project}/merge_requests/(\d+)/notes", self._add_note),
            route("PUT", rf"{project}/merge_requests/(\d+)/notes/(\d+)", self._edit_note),
            route(
                "GET",
                rf"{project}/repository/commits/([0-9a-f]{{40}})/merge_requests",
                self._requests_of_commit,
            ),
            route("GET", rf"{project}/merge_requests/(\d+)/pipelines", self._pipelines),
            route("GET", rf"{project}/pipelines/(\d+)/jobs", self._jobs),
            route("GET", rf"{project}/jobs/(\d+)/artifacts/(.+)", self._artifact),
            route("GET", rf"{project}/issues", self._list_issues),
            route("POST", rf"{project}/issues", self._create_issue),
            route("PUT", rf"{project}/issues/(\d+)", self._edit_issue),
            route("POST", rf"{project}/issues/(\d+)/notes", self._issue_note),
        ]

    def _user(self, request: Request, match: re.Match[str]) -> Response:
        return Response(200, {"id": BOT_ID, "username": f"project_{PROJECT_ID}_bot"})

    def _merge_request(self, request: Request, match: re.Match[str]) -> Response:
        found = self.merge_requests.get(int(match[1]))
        if found is None:
            return Response(404, {"message": "404 Not found"})
        return Response(200, {"iid": found.iid, "sha": found.sha, "state": found.state})

    def _notes(self, request: Request, match: re.Match[str]) -> Response:
        found = self.merge_requests.get(int(match[1]))
        if found is None:
            return Response(404, {"message": "404 Not found"})
        items = [
            {"id": n.id, "body": n.body, "system": n.system, "author": {"id": n.author}}
            for n in found.notes
        ]
        return Response(200, page_of(items, request, 20))

    def _add_note(self, request: Request, match: re.Match[str]) -> Response:
        found = self.merge_requests.get(int(match[1]))
        body = (request.body or {}).get("body")
        if found is None or not isinstance(body, str) or not body:
            return Response(400, {"message": "body is missing"})
        note = Note(self.next_id(), body)
        found.notes.append(note)
        return Response(201, {"id": note.id, "body": body, "system": False})

    def _edit_note(self, request: Request, match: re.Match[str]) -> Response:
        found = self.merge_requests.get(int(match[1]))
        body = (request.body or {}).get("body")
        for note in found.notes if found else []:
            if note.id == int(match[2]) and not note.system and isinstance(body, str):
                note.body, note.edits = body, note.edits + 1
                return Response(200, {"id": note.id, "body": body, "system": False})
        return Response(404, {"message": "404 Note Not Found"})

    def _requests_of_commit(self, request: Request, match: re.Match[str]) -> Response:
        return Response(
            200,
            [
                {
                    "iid": mr.iid,
                    "sha": mr.sha,
                    "state": mr.state,
                    "merge_commit_sha": mr.merge_commit_sha,
                    "squash_commit_sha": None,
                }
                for mr in self.merge_requests.values()
                if match[1] in (mr.sha, mr.merge_commit_sha)
            ],
        )

    def _pipelines(self, request: Request, match: re.Match[str]) -> Response:
        iid = int(match[1])
        found = [p for p in reversed(self.pipelines) if p.merge_request == iid]
        return Response(200, [{"id": p.id, "sha": p.sha} for p in page_of(found, request, 20)])

    def _jobs(self, request: Request, match: re.Match[str]) -> Response:
        pipeline = next((p for p in self.pipelines if p.id == int(match[1])), None)
        if pipeline is None:
            return Response(404, {"message": "404 Not found"})
        scopes = request.query.get("scope[]", [])
        jobs = [j for j in pipeline.jobs if not scopes or j.status in scopes]
        return Response(200, [{"id": j.id, "name": j.name, "status": j.status} for j in jobs])

    def _artifact(self, request: Request, match: re.Match[str]) -> Response:
        for pipeline in self.pipelines:
            for job in pipeline.jobs:
                if job.id == int(match[1]) and match[2] in job.artifacts:
                    return Response(200, raw=job.artifacts[match[2]])
        return Response(404, {"message": "404 Not found"})

    def _issue_json(self, issue: GitLabIssue) -> dict[str, Any]:
        return {
            "iid": issue.iid,
            "title": issue.title,
            "description": issue.description,
            "state": issue.state,
            "author": {"id": issue.author},
        }

    def _list_issues(self, request: Request, match: re.Match[str]) -> Response:
        state = request.arg("state", "all")
        found = [
            self._issue_json(i)
            for i in sorted(self.issues.values(), key=lambda i: -i.iid)
            if state == "all" or i.state == state
        ]
        return Response(200, page_of(found, request, 20))

    def _create_issue(self, request: Request, match: re.Match[str]) -> Response:
        body = request.body or {}
        if not isinstance(body.get("title"), str) or not body["title"]:
            return Response(400, {"message": "title is missing"})
        iid = self.open_issue(body["title"], str(body.get("description") or ""))
        self.issues[iid].author = BOT_ID
        return Response(201, self._issue_json(self.issues[iid]))

    def _edit_issue(self, request: Request, match: re.Match[str]) -> Response:
        issue = self.issues.get(int(match[1]))
        if issue is None:
            return Response(404, {"message": "404 Issue Not Found"})
        changes = request.body or {}
        if "description" in changes:
            issue.description, issue.edits = str(changes["description"]), issue.edits + 1
        if changes.get("state_event") == "close":
            issue.state = "closed"
        return Response(200, self._issue_json(issue))

    def _issue_note(self, request: Request, match: re.Match[str]) -> Response:
        issue = self.issues.get(int(match[1]))
        body = (request.body or {}).get("body")
        if issue is None or not isinstance(body, str):
            return Response(404, {"message": "404 Issue Not Found"})
        issue.notes.append(Note(self.next_id(), body))
        return Response(201, {"id": issue.notes[-1].id, "body": body})
