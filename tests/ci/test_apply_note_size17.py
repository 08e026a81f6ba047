"""The note a merge posts on the pull request when its apply fails quotes the end of the apply
log. Its lines are as long as what poolform printed (a provider's error, a value shown in full),
so forty of them can pass GitHub's 65,536-character limit: the note must still be posted, cut
and saying so, instead of the host refusing it (422) and the pull request never hearing why
its plan was not applied."""

from __future__ import annotations

import json
from pathlib import Path

from tests.ci.fake_github import FakeGitHub
from tests.ci.test_scripts import COMMIT, MERGED, ci, github_env


def test_the_failed_apply_note_stays_under_the_limit_with_a_log_of_long_lines(
    tmp_path: Path, github: FakeGitHub
) -> None:
    number = github.open_thread("change", pull=True, head=COMMIT)
    github.merge(number, MERGED)
    record = {"number": number, "head_sha": COMMIT, "name": f"pull request #{number}"}
    (tmp_path / "poolform-review.json").write_text(json.dumps(record))
    long_lines = [f"machine_pool.p{n}: error: " + "x" * 3_000 for n in range(40)]
    (tmp_path / "poolform-apply.log").write_text("\n".join(long_lines) + "\n")

    done = ci("apply-note", tmp_path, github_env(github, GITHUB_SHA=MERGED), "--status", "1")
    assert done.returncode == 0, done.stderr
    (note,) = github.threads[number].comments
    assert len(note.body) < 65_536
    assert "did not apply" in note.body and "cut" in note.body
