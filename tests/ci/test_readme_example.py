"""README.md shows the pull request comment a reviewer gets: it must be what the workflow posts
today, rendered by the installed poolform and the workflow's own code."""

from __future__ import annotations

from tests.ci.features import require_review_features
from tests.ci.readme_example import README, as_shown, render, shown_in_readme


def test_the_readme_shows_the_pull_request_comment_the_workflow_posts_today() -> None:
    require_review_features()
    shown = shown_in_readme(README.read_text())
    assert shown == as_shown(render()), (
        "README.md's CI comment example is stale: re-render it with "
        "`python -m tests.ci.readme_example --write`"
    )
