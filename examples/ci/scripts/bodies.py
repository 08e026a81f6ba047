"""What the CI scripts post: pull/merge request comments and the drift issue, as Markdown.

Pure functions, text in and text out. Every body starts with a marker, an HTML comment that
names the flow and the configuration directory, so the next run finds the same comment or
issue again and edits it instead of adding another (two configurations in one repository keep
separate ones). Text from poolform's error output goes into a fence longer than any run of
backticks in it, so it can never close the fence and be read as Markdown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

# GitHub refuses a comment or issue body of 65,536 characters or more; GitLab allows 1,000,000.
BODY_LIMIT = 65_536
# The plan's Markdown is capped by poolform itself (60,000); this keeps the whole body safe even
# if a future poolform or a long error were to exceed it.
TEXT_BUDGET = 60_000
LOG_LINES = 40


@dataclass(frozen=True)
class Context:
    """Where a body is posted from: the configuration, the commit and the job that made it."""

    directory: str
    commit: str
    run_url: str


def marker(flow: str, directory: str) -> str:
    """`<!-- poolform-ci: plan capacity -->`: `-->` cannot occur (`>` is percent-encoded)."""
    return f"<!-- poolform-ci: {flow} {quote(directory, safe='/._-')} -->"


def fenced(text: str, info: str = "text") -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text.rstrip()}\n{fence}"


def clipped(text: str, budget: int = TEXT_BUDGET) -> str:
    """At most `budget` characters, cut at a line with a note saying so."""
    if len(text) <= budget:
        return text
    cut = text[:budget].rsplit("\n", 1)[0]
    return f"{cut}\n\n_(cut: {len(text) - len(cut):,} more characters are in the job log)_\n"


def tail(text: str, lines: int = LOG_LINES) -> str:
    kept = text.rstrip().splitlines()[-lines:]
    return "\n".join(kept)


def short(commit: str) -> str:
    return commit[:12] if commit else "(unknown commit)"


def _link(run_url: str, words: str) -> str:
    return f"[{words}]({run_url})" if run_url else words


def plan_comment(context: Context, plan_markdown: str, artifact: str) -> str:
    """The review comment of a saved plan: poolform's Markdown, then what merging will do.
    `artifact` says where the plan file is kept, as Markdown."""
    return (
        f"{marker('plan', context.directory)}\n"
        f"{plan_section(plan_markdown)}\n\n"
        "---\n"
        f"Plan of `{context.directory}/`, saved as {artifact} by "
        f"{_link(context.run_url, 'this run')}. Merging applies exactly this "
        "plan; if the state or the configuration moves first, the merge applies nothing and "
        "asks to re-plan. Every push plans again and updates this comment.\n"
    )


def plan_section(plan_markdown: str) -> str:
    """poolform's Markdown as the plan comment holds it (clipped to the host's limit)."""
    return clipped(plan_markdown).rstrip()


def shows_plan(comment: str, directory: str, plan_markdown: str) -> bool:
    """Whether `comment` is the plan comment of exactly this plan (`poolform show FILE
    --markdown` of the saved file prints what `plan -out FILE --markdown` printed). Line ends
    and trailing blanks aside, which a host may normalise."""

    def lines(text: str) -> list[str]:
        return [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]

    expected = lines(f"{marker('plan', directory)}\n{plan_section(plan_markdown)}\n\n---")
    return bool(plan_markdown.strip()) and lines(comment)[: len(expected)] == expected


def plan_error_comment(context: Context, status: int | None, errors: str) -> str:
    """The review comment when there is no plan: poolform's error, so the author sees why."""
    if status is None:
        what = "The plan job stopped before `poolform plan` ran (see the job log)."
        shown = ""
    else:
        what = f"`poolform plan {context.directory}` exited {status}:"
        shown = "\n\n" + fenced(clipped(errors.strip() or "(no error output)")) + "\n"
    return (
        f"{marker('plan', context.directory)}\n"
        "### :x: poolform plan failed\n\n"
        f"{what}{shown}\n"
        f"Commit `{short(context.commit)}`, {_link(context.run_url, 'job log')}. "
        "Nothing can be merged and applied until a plan succeeds: fix it and push, and this "
        "comment is updated.\n"
    )


def apply_note(context: Context, status: int, log: str, review: str) -> str:
    """The note on a merged pull/merge request: what the merge's apply did."""
    head = marker("apply", context.directory)
    if status == 0:
        outcome = next(
            (
                line
                for line in reversed(log.splitlines())
                if line.startswith(("Apply complete", "No changes"))
            ),
            "Apply complete.",
        )
        return (
            f"{head}\n### :white_check_mark: Applied the reviewed plan\n\n"
            f"The plan reviewed on {review} was applied from merge commit "
            f"`{short(context.commit)}`: {outcome.strip()} "
            f"({_link(context.run_url, 'job log')})\n"
        )
    return (
        f"{head}\n### :x: The merge did not apply the reviewed plan\n\n"
        f"`poolform apply` of the plan reviewed on {review} exited {status} on merge commit "
        f"`{short(context.commit)}`:\n\n"
        f"{fenced(clipped(tail(log)))}\n\n"  # forty lines can be long ones
        "A plan refused as stale applies nothing: the state or the configuration moved since "
        "the review. To re-plan, open a pull request that touches "
        f"`{context.directory}/` (a comment line is enough): its plan is computed against the "
        f"current state, reviewed, and applied when it is merged. "
        f"{_link(context.run_url, 'Job log')}.\n"
    )


def missing_plan_note(
    context: Context, review: str, reason: str, what: str = "no reviewed plan"
) -> str:
    """The note on a merged pull/merge request whose reviewed plan cannot be found (or
    trusted: `what`)."""
    return (
        f"{marker('apply', context.directory)}\n"
        f"### :x: The merge did not apply: {what}\n\n"
        f"{reason}\n\n"
        f"Nothing was applied for {review}. To re-plan, open a pull request that touches "
        f"`{context.directory}/`: its plan is reviewed and applied when it is merged. "
        f"{_link(context.run_url, 'Job log')}.\n"
    )


def drift_title(directory: str) -> str:
    return f"poolform: drift in {directory}"


def drift_issue(context: Context, report: str) -> str:
    return (
        f"{marker('drift', context.directory)}\n"
        f"{clipped(report).rstrip()}\n\n"
        "---\n"
        f"Last checked at commit `{short(context.commit)}` by "
        f"{_link(context.run_url, 'the nightly drift run')}. This issue is updated every "
        "night while drift lasts and closed by the first run that finds none.\n"
    )


def drift_gone(context: Context) -> str:
    return (
        f"No drift any more: {_link(context.run_url, 'the nightly drift run')} at commit "
        f"`{short(context.commit)}` found every resource as recorded. Closing.\n"
    )
