"""The nightly drift job when the state backend cannot be reached (the database is down, moved,
or its password was rotated without the secret): the job fails, its output says the state could
not be read, and the drift issue is left as it was. Neither "no drift" (closing an open issue
while the drift goes on) nor a stale finding: a check that did not run says so."""

from __future__ import annotations

import socket

import pytest

from tests.ci.conftest import STATE_DSN_READONLY
from tests.ci.fake_github import FakeGitHub
from tests.ci.flows import CONFIG, GitHubFlow
from tests.ci.team import Team

POSTGRES = pytest.mark.parametrize("backend", ["postgres"], indirect=True)


def closed_port() -> int:
    """A port nothing listens on: bound, never listened to, so connecting is refused."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    port: int = holder.getsockname()[1]
    holder.close()
    return port


@POSTGRES
def test_a_night_whose_state_is_unreachable_fails_saying_so_and_leaves_the_drift_issue_open(
    team: Team, github: FakeGitHub
) -> None:
    team.apply_by_hand()
    flow = GitHubFlow(team, github)
    changed = team.poolform(
        "local", "resize-group", "machine_pool.shared.machine_type.cpu", "--max", "5"
    )
    assert changed.returncode == 0, changed.stderr
    found = flow.night()
    assert found.conclusion == "success", found.output
    (issue,) = github.issues()
    assert issue.state == "open"

    team.backend.secrets[STATE_DSN_READONLY] = (
        f"postgresql://reader:pw@127.0.0.1:{closed_port()}/postgres"
    )
    down = flow.night()

    assert down.conclusion == "failure"
    assert down.step("Check for drift and keep the issue current").code == 1
    assert "error: cannot connect to the PostgreSQL state at postgresql://" in down.output
    assert "an error, not a finding" in down.output
    assert "No drift" not in down.output
    assert issue.state == "open" and issue.edits == 0 and not issue.comments
    assert len(github.issues()) == 1
    assert CONFIG in issue.body
