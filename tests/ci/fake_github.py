"""GitHub's REST API as the CI scripts use it: pull request comments, the pull requests of a
commit, workflow artifacts (the zip behind a redirect to blob storage), and issues.

Issues and pull requests share one number sequence and one list, as on GitHub; the token is
checked on every call but the blob download, which must come without it.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any

from tests.ci.fake_http import FakeApi, Request, Response, Route, page_of, route

REPO = "acme/capacity"
BOT = "github-actions[bot]"  # who the job's GITHUB_TOKEN writes as
HUMAN = "octocat"


@dataclass
class Comment:
    id: int
    body: str
    edits: int = 0
    author: str = BOT
    editor: str | None = None  # who edited it last (GraphQL's `editor`), as a REST login

    @property
    def node_id(self) -> str:
        return f"IC_{self.id}"


@dataclass
class Thread:
    """An issue or a pull request: a number, a body and its comments."""

    number: int
    title: str
    body: str
    is_pull: bool
    head_sha: str = ""
    state: str = "open"
    merged_at: str | None = None
    merge_commit_sha: str | None = None
    edits: int = 0
    comments: list[Comment] = field(default_factory=list)
    author: str = HUMAN


@dataclass
class Artifact:
    id: int
    name: str
    archive: bytes
    run_id: int
    head_sha: str
    expired: bool = False


class FakeGitHub(FakeApi):
    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token
        self.threads: dict[int, Thread] = {}
        self.artifacts: list[Artifact] = []
        self._ids = 1000

    # --- what the platform does on its own (the test drives it) ---

    def _next_id(self) -> int:
        self._ids += 1
        return self._ids

    def open_thread(self, title: str, body: str = "", *, pull: bool = False, head: str = "") -> int:
        with self.lock:
            number = len(self.threads) + 1
            self.threads[number] = Thread(number, title, body, pull, head_sha=head)
            return number

    def human_comment(self, number: int, body: str, author: str = HUMAN) -> None:
        with self.lock:
            self.threads[number].comments.append(Comment(self._next_id(), body, author=author))

    def human_edit(self, number: int, marker: str, body: str, editor: str = HUMAN) -> None:
        """Someone with write access edits the comment that starts with `marker` (GitHub lets
        them edit anyone's), as the web page does: no API call of the workflow's token."""
        with self.lock:
            comment = next(c for c in self.threads[number].comments if c.body.startswith(marker))
            comment.body, comment.edits, comment.editor = body, comment.edits + 1, editor

    def merge(self, number: int, merge_sha: str) -> None:
        with self.lock:
            pull = self.threads[number]
            pull.state, pull.merged_at, pull.merge_commit_sha = "closed", "merged", merge_sha

    def upload_artifact(self, name: str, files: dict[str, bytes], run_id: int, head: str) -> None:
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for path, data in files.items():
                archive.writestr(path, data)
        with self.lock:
            self.artifacts.append(Artifact(self._next_id(), name, buffer.getvalue(), run_id, head))

    def issues(self) -> list[Thread]:
        return [thread for thread in self.threads.values() if not thread.is_pull]

    # --- the API ---

    def authorized(self, request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {self.token}"

    def routes(self) -> list[Route]:
        repo = f"/repos/{re.escape(REPO)}"
        return [
            route("POST", r"/graphql", self._graphql),
            route("GET", rf"{repo}/issues/(\d+)/comments", self._comments),
            route("POST", rf"{repo}/issues/(\d+)/comments", self._add_comment),
            route("PATCH", rf"{repo}/issues/comments/(\d+)", self._edit_comment),
            route("GET", rf"{repo}/pulls/(\d+)", self._pull),
            route("GET", rf"{repo}/commits/([0-9a-f]{{40}})/pulls", self._pulls_of_commit),
            route("GET", rf"{repo}/actions/artifacts", self._artifacts),
            route("GET", rf"{repo}/actions/artifacts/(\d+)/zip", self._artifact_zip),
            route("GET", r"/blob/(\d+)", self._blob, public=True),
            route("GET", rf"{repo}/issues", self._list_issues),
            route("POST", rf"{repo}/issues", self._create_issue),
            route("PATCH", rf"{repo}/issues/(\d+)", self._edit_issue),
        ]

    def _comments(self, request: Request, match: re.Match[str]) -> Response:
        thread = self.threads.get(int(match[1]))
        if thread is None:
            return Response(404, {"message": "Not Found"})
        items = [
            {"id": c.id, "node_id": c.node_id, "body": c.body, "user": {"login": c.author}}
            for c in thread.comments
        ]
        return Response(200, page_of(items, request, 30))

    def _add_comment(self, request: Request, match: re.Match[str]) -> Response:
        thread = self.threads.get(int(match[1]))
        body = (request.body or {}).get("body")
        if thread is None or not isinstance(body, str):
            return Response(422 if thread else 404, {"message": "Validation Failed"})
        if len(body) >= 65_536:
            return Response(422, {"message": "body is too long (maximum is 65536 characters)"})
        comment = Comment(self._next_id(), body)
        thread.comments.append(comment)
        return Response(201, {"id": comment.id, "body": body})

    def _edit_comment(self, request: Request, match: re.Match[str]) -> Response:
        body = (request.body or {}).get("body")
        for thread in self.threads.values():
            for comment in thread.comments:
                if comment.id == int(match[1]) and isinstance(body, str):
                    if len(body) >= 65_536:
                        return Response(422, {"message": "body is too long"})
                    comment.body, comment.edits = body, comment.edits + 1
                    comment.editor = BOT
                    return Response(200, {"id": comment.id, "body": body})
        return Response(404, {"message": "Not Found"})

    def _graphql(self, request: Request, match: re.Match[str]) -> Response:
        """The one query the scripts make: a comment's last editor, by node id. GraphQL names a
        bot by its login without `[bot]`."""
        node_id = ((request.body or {}).get("variables") or {}).get("id")
        for thread in self.threads.values():
            for comment in thread.comments:
                if comment.node_id == node_id:
                    login = (comment.editor or "").removesuffix("[bot]")
                    editor = {"login": login} if comment.editor else None
                    return Response(200, {"data": {"node": {"editor": editor}}})
        message = f"Could not resolve to a node with the global id of '{node_id}'"
        return Response(200, {"data": {"node": None}, "errors": [{"message": message}]})

    def _pull(self, request: Request, match: re.Match[str]) -> Response:
        thread = self.threads.get(int(match[1]))
        if thread is None or not thread.is_pull:
            return Response(404, {"message": "Not Found"})
        return Response(
            200, {"number": thread.number, "state": thread.state, "head": {"sha": thread.head_sha}}
        )

    def _pulls_of_commit(self, request: Request, match: re.Match[str]) -> Response:
        sha = match[1]
        found = [
            {
                "number": t.number,
                "state": t.state,
                "merged_at": t.merged_at,
                "merge_commit_sha": t.merge_commit_sha,
                "head": {"sha": t.head_sha},
            }
            for t in self.threads.values()
            if t.is_pull and sha in (t.head_sha, t.merge_commit_sha)
        ]
        return Response(200, found)

    def _artifacts(self, request: Request, match: re.Match[str]) -> Response:
        name = request.arg("name")
        found = [a for a in reversed(self.artifacts) if not name or a.name == name]
        listed = [
            {
                "id": a.id,
                "name": a.name,
                "expired": a.expired,
                "workflow_run": {"id": a.run_id, "head_sha": a.head_sha},
            }
            for a in page_of(found, request, 30)
        ]
        return Response(200, {"total_count": len(found), "artifacts": listed})

    def _artifact_zip(self, request: Request, match: re.Match[str]) -> Response:
        artifact = next((a for a in self.artifacts if a.id == int(match[1])), None)
        if artifact is None or artifact.expired:
            return Response(410 if artifact else 404, {"message": "Artifact has expired"})
        return Response(302, headers={"Location": f"{self.url}/blob/{artifact.id}"})

    def _blob(self, request: Request, match: re.Match[str]) -> Response:
        if "authorization" in request.headers:  # blob storage refuses a foreign token
            return Response(400, {"message": "the token must not follow the redirect"})
        artifact = next(a for a in self.artifacts if a.id == int(match[1]))
        return Response(200, raw=artifact.archive)

    def _issue_json(self, thread: Thread) -> dict[str, Any]:
        item: dict[str, Any] = {
            "number": thread.number,
            "title": thread.title,
            "body": thread.body,
            "state": thread.state,
            "user": {"login": thread.author},
        }
        if thread.is_pull:
            item["pull_request"] = {"url": f"{self.url}/pulls/{thread.number}"}
        return item

    def _list_issues(self, request: Request, match: re.Match[str]) -> Response:
        state = request.arg("state", "open")
        found = [
            self._issue_json(t)
            for t in sorted(self.threads.values(), key=lambda t: -t.number)
            if state == "all" or t.state == state
        ]
        return Response(200, page_of(found, request, 30))

    def _create_issue(self, request: Request, match: re.Match[str]) -> Response:
        body = request.body or {}
        if not isinstance(body.get("title"), str) or not body["title"]:
            return Response(422, {"message": "title is missing"})
        number = self.open_thread(body["title"], str(body.get("body") or ""))
        self.threads[number].author = BOT
        return Response(201, self._issue_json(self.threads[number]))

    def _edit_issue(self, request: Request, match: re.Match[str]) -> Response:
        thread = self.threads.get(int(match[1]))
        if thread is None:
            return Response(404, {"message": "Not Found"})
        changes = request.body or {}
        if "body" in changes:
            thread.body, thread.edits = str(changes["body"]), thread.edits + 1
        if "state" in changes:
            thread.state = str(changes["state"])
        return Response(200, self._issue_json(thread))
