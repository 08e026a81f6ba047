"""The pull-request comment of a plan: short, grouped, and under GitHub's comment limit.

Sections, most important first: title and summary table; replacements and deletions with their
reasons (never cut unless they alone exceed the limit); the change graph (Mermaid, at most
MERMAID_MAX changes); one collapsible section per change, with bulk in-place updates of the same
shape (resource type and changed attribute paths) folded into one section. When the text would
exceed `limit`, in-place details go first, then the graph, then creates, then replacements and
deletions, and a closing note says what was left out.

Input cannot forge the comment: names, keys, values and reasons are escaped for where they land
(reconciler/render/escape.py), so the fences, headings and HTML of the comment are exactly the
ones made here.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass

from reconciler.plan.model import Action, Plan, ResourceChange
from reconciler.render.common import (
    KNOWN_AFTER_APPLY,
    as_written,
    comment_marker,
    flatten,
    fmt,
    header_phrase,
    leaf_symbol,
    leaf_value,
    rolling_line,
    shown_path,
    shown_written,
    summary_line,
)
from reconciler.render.escape import code_span, fence, markdown_text, one_line
from reconciler.render.graph import render_mermaid

MERMAID_MAX = 50
GROUP_MIN = 3  # same-shape updates folded into one section from this many on
PLURALS = {
    "subject_policy": "subject policies",
    "machine_type": "machine types",
    "resource_pool": "resource pools",
    "worker_pool": "worker pools",
    "compute_config": "compute configs",
}
# Cut order: lower goes first.
CUT_RANK = {Action.UPDATE: 0, "graph": 1, Action.CREATE: 2, Action.DELETE: 3, Action.REPLACE: 3}
NOUNS = {
    Action.UPDATE: "in-place update",
    Action.CREATE: "create",
    Action.DELETE: "deletion",
    Action.REPLACE: "replacement",
    "graph": "change graph",
}


@dataclass(frozen=True)
class Section:
    text: str
    rank: int
    kind: Action | str
    resources: int  # how many changes it shows (0 for the graph)


@dataclass(frozen=True)
class Provenance:
    """What a pull-request comment of a plan says about itself: what it is for (`label`: the
    plan's --label, else its configuration directory; the comment's marker) and the commit the
    configuration was at, when known."""

    label: str
    commit: str | None = None


def render_markdown(
    plan: Plan,
    *,
    limit: int = 60_000,
    plan_file: str | None = None,
    provenance: Provenance | None = None,
) -> str:
    """The plan as GitHub-flavoured Markdown, always shorter than `limit` characters. What is
    cut is named, with where to see all of it: `poolform show <plan_file>` when the plan was
    saved, else how to save it. With `provenance`, it starts with a marker a workflow can find
    (`<!-- poolform-plan: LABEL -->`) and says which commit and state serial it was made from."""
    head = [f"### poolform plan: {_title(plan)}", ""]
    if provenance is not None:
        head = [comment_marker("plan", provenance.label), *head, _origin(plan, provenance), ""]
    head += _table(plan)
    if not plan.has_changes:
        return "\n".join([*head, *_warnings(plan)]) + "\n"
    critical = _critical(plan) + _warnings(plan)
    sections: list[Section] = []
    if len(plan.changes) <= MERMAID_MAX:
        graph = f"#### Change graph\n\n{fence('mermaid', render_mermaid(plan).splitlines())}\n"
        sections.append(Section(graph, CUT_RANK["graph"], "graph", 0))
    sections += _change_sections(plan)
    return _fit("\n".join(head) + "\n", critical, sections, limit, _see_all(plan_file))


def _origin(plan: Plan, provenance: Provenance) -> str:
    commit = f"commit {code_span(provenance.commit)}" if provenance.commit else "an unknown commit"
    return (
        f"For {code_span(provenance.label)}, computed at {commit} against state serial "
        f"{plan.serial} (lineage {code_span(plan.lineage)})."
    )


def _title(plan: Plan) -> str:
    return summary_line(plan).removeprefix("Plan: ").rstrip(".")


def _table(plan: Plan) -> list[str]:
    s = plan.summary
    rows = [
        ("add", s.add),
        ("change in place", s.change),
        ("replace", s.replace),
        ("destroy", s.destroy),
        ("unchanged", plan.unchanged),
    ]
    return ["| action | count |", "| --- | ---: |", *(f"| {a} | {n} |" for a, n in rows)]


def _critical(plan: Plan) -> list[str]:
    risky = [c for c in plan.changes if c.action in (Action.REPLACE, Action.DELETE)]
    if not risky:
        return []
    lines = ["#### Replacements and deletions", ""]
    for change in risky:
        what = "destroy" if change.action is Action.DELETE else "replace"
        why = reason_markdown(change.reason, change)
        line = f"- `{change.symbol}` **{code_span(str(change.key))}** ({what}): {why}"
        roll = rolling_line(change)
        if roll:
            line += f"; {roll.removeprefix('# ')}"
        lines.append(line)
    return lines


def _reason_pieces(text: str, change: ResourceChange) -> list[tuple[str, bool]]:
    """`text` (a reason, or a header phrase holding one) as (text, is code) pieces: the
    attribute paths the reason quotes are code, everything else literal; a backtick that came
    with a name or a value is never taken for markup."""
    quoted = sorted({f"`{path}`" for path in change.forced_by}, key=len, reverse=True)
    if not quoted:
        return [(text, False)]
    pieces = re.split("(" + "|".join(map(re.escape, quoted)) + ")", text)
    return [
        (piece[1:-1], True) if i % 2 else (piece, False) for i, piece in enumerate(pieces) if piece
    ]


def reason_markdown(text: str, change: ResourceChange) -> str:
    return "".join(
        code_span(piece) if code else markdown_text(piece)
        for piece, code in _reason_pieces(text, change)
    )


def reason_html(text: str, change: ResourceChange) -> str:
    return "".join(
        _code_html(piece) if code else html.escape(one_line(piece), quote=False)
        for piece, code in _reason_pieces(text, change)
    )


def _warnings(plan: Plan) -> list[str]:
    """Every validation warning as `poolform validate` prints it, message and hint."""
    lines = [line for warning in plan.warnings for line in warning.splitlines() if line.strip()]
    return ["", "#### Warnings", "", fence("text", lines)] if lines else []


def diff_lines(change: ResourceChange) -> list[str]:
    """A change as `diff` lines: `+`/`-` pairs per attribute, flattened paths, masked."""
    if change.action is Action.CREATE:
        known = [
            f"+ {a.path} = {KNOWN_AFTER_APPLY}" for a in change.attributes if a.known_after_apply
        ]
        written = shown_written(change)
        return known + [
            f"+ {p} = {as_written(v, written[p]) if p in written else fmt(v)}"
            for p, v in flatten(change.after or {})
        ]
    if change.action is Action.DELETE:
        return [f"- {change.key}"]
    lines: list[str] = []
    for attr in change.attributes:
        forced = "  # forces replacement" if attr.forces_replacement else ""
        value = leaf_value(attr, change.written)
        sym = leaf_symbol(attr)
        path = shown_path(attr.path, change.before, change.after)
        if sym == "~" and " -> " in value:
            old, new = value.split(" -> ", 1)
            lines += [f"- {path} = {old}", f"+ {path} = {new}{forced}"]
        elif sym == "~":
            lines.append(f"! {path} = {value} (changed){forced}")
        elif sym == "-":
            lines.append(f"- {path} = {value.removesuffix(' -> null')}{forced}")
        else:
            lines.append(f"+ {path} = {value}{forced}")
    roll = rolling_line(change)
    return [*lines, roll] if roll else lines


def _details(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body}\n</details>\n"


def _code_html(text: str) -> str:
    return f"<code>{html.escape(one_line(text), quote=False)}</code>"


def _shape(change: ResourceChange) -> tuple[str, tuple[str, ...]] | None:
    if change.action is not Action.UPDATE:
        return None
    return change.resource_type, tuple(sorted({a.path for a in change.attributes}))


def _change_sections(plan: Plan) -> list[Section]:
    shapes = Counter(s for s in map(_shape, plan.changes) if s is not None)
    done: set[tuple[str, tuple[str, ...]]] = set()
    out: list[Section] = []
    for change in plan.changes:
        shape = _shape(change)
        rank = CUT_RANK[change.action]
        if shape is not None and shapes[shape] >= GROUP_MIN:
            if shape not in done:
                done.add(shape)
                members = [c for c in plan.changes if _shape(c) == shape]
                out.append(Section(_group(shape, members), rank, change.action, len(members)))
            continue
        summary = f"{_code_html(f'{change.symbol} {change.key}')} {reason_html(header_phrase(change), change)}"
        body = fence("diff", diff_lines(change))
        out.append(Section(_details(summary, body), rank, change.action, 1))
    return out


def _group(shape: tuple[str, tuple[str, ...]], members: list[ResourceChange]) -> str:
    rtype, paths = shape
    noun = html.escape(one_line(PLURALS.get(rtype, f"{rtype} resources")), quote=False)
    changed = ", ".join(map(_code_html, paths))
    summary = f"{len(members)} {noun}: {changed} changed"
    variants = Counter(tuple(diff_lines(c)) for c in members)
    body = ["Addresses: " + ", ".join(code_span(str(c.key)) for c in members), ""]
    shown = variants.most_common(5)
    for lines, count in shown:
        intro = f"All {count}:" if len(variants) == 1 else f"{count} of them:"
        body += [intro, "", fence("diff", list(lines)), ""]
    rest = sum(variants.values()) - sum(n for _, n in shown)
    if rest:
        body.append(f"… and {rest} with other values.")
    return _details(summary, "\n".join(body).rstrip())


def _see_all(plan_file: str | None) -> str:
    if plan_file is None:
        return "save the plan with `poolform plan -out FILE` and run `poolform show FILE`"
    return f"run {code_span(f'poolform show {plan_file}')}"


def _fit(head: str, critical: list[str], sections: list[Section], limit: int, see_all: str) -> str:
    """Join the parts, dropping the least important sections until the text is under `limit`.
    Lengths are kept incrementally: plans with 10,000 changes must not cost quadratic time."""
    fixed = [head] + (["\n".join(critical) + "\n"] if critical else [])
    keep = [True] * len(sections)
    counts: Counter[str] = Counter()
    kept_chars = sum(len(s.text) for s in sections)
    kept_parts = len(fixed) + len(sections)
    base = sum(len(p) for p in fixed)

    def length() -> int:
        note = len(_cut_note(counts, see_all)) + 1 if counts else 0
        return base + kept_chars + kept_parts - 1 + note

    for index in sorted(range(len(sections)), key=lambda i: (sections[i].rank, -i)):
        if length() < limit:
            break
        keep[index] = False
        kept_chars -= len(sections[index].text)
        kept_parts -= 1
        counts[NOUNS[sections[index].kind]] += sections[index].resources or 1
    parts = fixed + [s.text for s, k in zip(sections, keep, strict=True) if k]
    text = "\n".join(parts + ([_cut_note(counts, see_all)] if counts else []))
    if len(text) >= limit:  # the reasons alone are too long: keep as many lines as fit
        note = f"\n… reasons truncated at {limit:,} characters; {see_all}\n"
        if len(note) >= limit:
            return text[: max(0, limit - 1)]
        text = text[: limit - len(note) - 1].rsplit("\n", 1)[0] + note
    return text


def _cut_note(counts: Counter[str], see_all: str) -> str:
    """`… 40 more in-place updates, the change graph not shown; run `poolform show FILE``."""
    parts = []
    for noun in ("in-place update", "create", "replacement", "deletion"):
        n = counts.get(noun, 0)
        if n:
            plural = f"{noun}{'s' if n != 1 else ''}"
            more = noun in ("in-place update", "create")
            parts.append(f"{n} more {plural}" if more else f"details of {n} {plural}")
    if counts.get("change graph"):
        parts.append("the change graph")
    return f"… {', '.join(parts)} not shown; {see_all}\n"
