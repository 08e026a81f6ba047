"""Output cannot be forged by input (issue 9, item 13).

Names, keys, values, reasons, ids and warnings can hold newlines, backticks, HTML comments,
`</details>`, Markdown headings and terminal escape sequences. Whatever they hold, a rendered
plan or drift report has exactly the structure the renderer made: the Markdown has the same
fences, headings, HTML blocks and inline markup as the same report with harmless strings, and
terminal text has the same lines, each free of control and format characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from reconciler.drift.model import (
    AttributeDrift,
    DriftReport,
    DriftStatus,
    Note,
    NoteCode,
    ResourceDrift,
    Unmanaged,
)
from reconciler.errors import Diagnostic, Location
from reconciler.plan.model import (
    Action,
    AttributeChange,
    Plan,
    ReplaceStrategy,
    ResourceChange,
    Rolling,
)
from reconciler.plan.reasons import Reason
from reconciler.render import render_dot, render_markdown, render_mermaid, render_text
from reconciler.render.common import comment_marker
from reconciler.render.drift import render_drift_markdown, render_drift_text
from reconciler.render.escape import code_span, fence, markdown_text, one_line

PIECES = [
    "\n",
    "\r\n",
    "\n\n### No changes. Your capacity matches the configuration.\n",
    "```",
    "````diff\n",
    "`",
    "~~~",
    "<!--",
    "-->",
    "</details>",
    "<details><summary>x</summary>",
    "</summary>",
    "<script>",
    "\x1b[31m",
    "\x1b[2J",
    "\x1b]0;owned\x07",
    "\x1b]8;;http://evil\x1b\\",
    "\x07",
    "\x9b",
    "\x85",
    "\x00",
    "\x7f",
    "\u202e",
    "\u2066",
    "\u2028",
    "\t",
    "|",
    "**",
    "_x_",
    "[link](http://evil)",
    "&lt;",
    "#",
    "\\",
    '"',
    "- ",
    "+ ",
    "> ",
    ".",
    "[0]",
]
HOSTILE = st.lists(st.sampled_from(PIECES) | st.text(max_size=4), max_size=6).map("".join)
SLOTS = 16

markdown = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def plan_from(s: list[str]) -> Plan:
    """A plan of every kind of change, each string slot filled from `s`."""
    changes = (
        ResourceChange(
            f"resource_pool.{s[0]}",
            "resource_pool",
            Action.CREATE,
            "not yet created",
            (AttributeChange("id", None, None, known_after_apply=True),),
            after={s[1]: {s[2]: s[3]}, "description": s[4]},
        ),
        ResourceChange(
            f"subject_policy.{s[5]}",
            "subject_policy",
            Action.UPDATE,
            s[6],
            (AttributeChange(s[7], s[8], s[9]),),
            update_kind="metadata",
            before={s[7]: s[8]},
            after={s[7]: s[9]},
        ),
        ResourceChange(
            f"worker_pool.{s[10]}",
            "worker_pool",
            Action.REPLACE,
            f"`{s[11]}` forces replacement",
            (AttributeChange(s[11], s[12], s[13], forces_replacement=True),),
            replace_strategy=ReplaceStrategy.CREATE_BEFORE_DESTROY,
            forced_by=(s[11],),
            rolling=Rolling(instances=3, batch_size=1, batches=3, max_surge=1, max_unavailable=0),
            before={s[11]: s[12]},
            after={s[11]: s[13]},
            reason_code=Reason.FORCED_BY_ATTRIBUTE,
        ),
        ResourceChange(
            f"compute_config.{s[14]}",
            "compute_config",
            Action.DELETE,
            "no longer in the configuration",
            before={s[14]: s[15], "head": 1},
        ),
        ResourceChange(
            f"machine_pool.m.machine_type.{s[0]}",
            "machine_type",
            Action.DELETE,
            f"tagged with this state but recorded nowhere ({s[15]})",
            cleanup_ids={"group": s[15]},
        ),
    )
    keys = tuple(c.key for c in changes)
    return Plan(
        config_digest="d" * 64,
        lineage="00000000-0000-4000-8000-000000000000",
        serial=1,
        changes=changes,
        order=(keys,),
        edges=((keys[0], keys[1]),),
        warnings=(
            Diagnostic(
                "warning", "rule", f"`{s[4]}` is risky", Location(f"{s[0]}.yaml", 1, 1), s[6]
            ).render(),
        ),
    )


def drift_from(s: list[str]) -> DriftReport:
    return DriftReport(
        lineage="00000000-0000-4000-8000-000000000000",
        serial=2,
        checked=3,
        drifted=(
            ResourceDrift(
                f"machine_pool.m.machine_type.{s[0]}",
                "machine_type",
                DriftStatus.CHANGED,
                f"changed outside poolform: {s[1]}",
                (AttributeDrift(s[1], s[2], s[3], "configuration"),),
                {"group": s[4]},
            ),
            ResourceDrift(f"resource_pool.{s[5]}", "resource_pool", DriftStatus.DELETED, s[6]),
        ),
        unmanaged=(Unmanaged(f"worker_pool.{s[7]}", "worker_pool", {s[8]: s[9]}, s[10]),),
        notes=(Note(f"machine_pool.m.machine_type.{s[11]}", NoteCode.SCHEDULER_MOVED, s[12]),),
    )


def harmless(strings: list[str]) -> list[str]:
    return [f"v{n}" for n in range(len(strings))]


def printable_twin(strings: list[str]) -> list[str]:
    """The same strings with every non-printable character replaced by a letter: the same
    shape (dots, brackets, lengths), nothing a terminal acts on."""
    return ["".join(c if c.isprintable() else "x" for c in s) for s in strings]


def walk(tokens: list[Token]) -> Iterator[Token]:
    for token in tokens:
        yield token
        yield from walk(token.children or [])


def structure(text: str) -> list[tuple[str, str, str]]:
    """Every block and inline token but plain text, with fence info and HTML blocks' tags."""
    shape = []
    for token in walk(markdown.parse(text)):
        if token.type in ("text", "text_special", "softbreak"):
            continue
        detail = token.info if token.type == "fence" else ""
        if token.type in ("html_block", "html_inline"):
            detail = re.sub(r">[^<]*<", "><", token.content.strip())  # the tags, not the text
        shape.append((token.type, token.tag, detail))
    return shape


def headings(text: str) -> list[str]:
    tokens = markdown.parse(text)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


@settings(max_examples=150, deadline=None)
@given(st.lists(HOSTILE, min_size=SLOTS, max_size=SLOTS))
def test_a_plan_comment_has_exactly_the_markup_the_renderer_made(strings: list[str]) -> None:
    hostile = render_markdown(plan_from(strings), limit=10**9)
    expected = render_markdown(plan_from(harmless(strings)), limit=10**9)
    assert structure(hostile) == structure(expected)
    assert headings(hostile) == [
        "poolform plan: 1 to add, 1 to change, 1 to replace, 2 to destroy",
        "Replacements and deletions",
        "Warnings",
        "Change graph",
    ]
    assert not _terminal_controls(hostile)


@settings(max_examples=100, deadline=None)
@given(st.lists(HOSTILE, min_size=SLOTS, max_size=SLOTS))
def test_a_drift_report_in_markdown_has_exactly_the_renderer_s_markup(strings: list[str]) -> None:
    hostile = render_drift_markdown(drift_from(strings))
    expected = render_drift_markdown(drift_from(harmless(strings)))
    assert structure(hostile) == structure(expected)
    assert headings(hostile) == ["⚠️ poolform drift".replace("⚠️", ":warning:")]
    assert not _terminal_controls(hostile)


def _terminal_controls(text: str) -> list[str]:
    return [c for c in text if not c.isprintable() and c != "\n"]


def _same_lines(render: Callable[[list[str]], str], strings: list[str]) -> None:
    hostile = render(strings)
    assert not _terminal_controls(hostile), hostile
    assert len(hostile.splitlines()) == len(render(printable_twin(strings)).splitlines())


@settings(max_examples=150, deadline=None)
@given(st.lists(HOSTILE, min_size=SLOTS, max_size=SLOTS))
def test_terminal_text_has_the_renderer_s_lines_and_no_control_characters(
    strings: list[str],
) -> None:
    _same_lines(lambda s: render_text(plan_from(s)), strings)
    _same_lines(lambda s: render_drift_text(drift_from(s)), strings)
    _same_lines(lambda s: render_mermaid(plan_from(s)), strings)
    _same_lines(lambda s: render_dot(plan_from(s)), strings)


@settings(max_examples=50, deadline=None)
@given(st.lists(HOSTILE, min_size=SLOTS, max_size=SLOTS))
def test_colour_is_only_the_renderer_s_own(strings: list[str]) -> None:
    coloured = render_text(plan_from(strings), color=True)
    assert "\x1b" not in re.sub(r"\x1b\[\d+m", "", coloured)


def test_a_fake_no_changes_heading_in_a_value_stays_inside_its_line() -> None:
    strings = harmless(["x"] * SLOTS)
    strings[9] = "ok\n```\n\n### No changes. Your capacity matches the configuration.\n<!--"
    md = render_markdown(plan_from(strings))
    assert (
        '+ v7 = "ok\\n```\\n\\n### No changes. Your capacity matches the configuration.\\n<!--"'
        in md
    )
    assert not [line for line in md.splitlines() if line.startswith(("### No", "<!--"))]
    assert "No changes" not in "".join(headings(md))


def test_escape_sequences_are_shown_not_sent() -> None:
    assert one_line("a\x1b[2Jb\x07\u202ec\n") == "a\\u001b[2Jb\\u0007\\u202ec\\n"
    assert one_line("ünïcode ✓ 中文") == "ünïcode ✓ 中文"


def test_code_and_fences_outlast_the_backticks_inside() -> None:
    assert code_span("a`b") == "``a`b``"
    assert code_span("`x`") == "`` `x` ``"
    assert fence("diff", ["+ a = ```", "+ b = ````"]).startswith("`````diff\n")
    assert fence("diff", ["+ a = 1"]) == "```diff\n+ a = 1\n```"
    assert markdown_text("<!-- **x** | [y](z) -->") == ("\\<!-- \\*\\*x\\*\\* \\| \\[y\\](z) --\\>")


@settings(max_examples=200, deadline=None)
@given(HOSTILE)
def test_the_comment_marker_is_one_html_comment_whatever_the_label(label: str) -> None:
    marker = comment_marker("plan", label)
    assert re.fullmatch(r"<!-- poolform-plan: [A-Za-z0-9._/#:@+=_-]+ -->", marker)
    assert marker.count("--") == 2  # the comment's own opening and closing only
    assert comment_marker("plan", label) == marker  # stable: a workflow finds it again
