"""The change graph as a picture: Mermaid (for Markdown) and Graphviz DOT (`poolform graph`).

One node per change, labelled with its symbol and address and coloured by action; edges run from
what happens first to what follows (plan.edges). DOT puts each generation of plan.order on one
rank, so the apply order reads left to right.
"""

from __future__ import annotations

import re

from reconciler.plan.model import Action, ChangeKey, Plan
from reconciler.render.escape import one_line

# action: (class name, fill, stroke)
STYLES = {
    Action.CREATE: ("create", "#d3f9d8", "#2b8a3e"),
    Action.UPDATE: ("update", "#fff3bf", "#e67700"),
    Action.REPLACE: ("replace", "#f3d9fa", "#ae3ec9"),
    Action.DELETE: ("delete", "#ffe3e3", "#c92a2a"),
    Action.NOOP: ("noop", "#f1f3f5", "#868e96"),
}
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")


def node_ids(plan: Plan) -> dict[ChangeKey, str]:
    """A Mermaid-safe, unique, deterministic id per change (`n_` + its key, `_` for the rest)."""
    ids: dict[ChangeKey, str] = {}
    taken: set[str] = set()
    for change in plan.changes:
        base = "n_" + _UNSAFE.sub("_", str(change.key))
        candidate, n = base, 1
        while candidate in taken:
            n += 1
            candidate = f"{base}_{n}"
        taken.add(candidate)
        ids[change.key] = candidate
    return ids


def _mermaid_label(text: str) -> str:
    """A label Mermaid shows as written: on one line, its entity and markup characters coded."""
    coded = {"#": "#35;", "&": "#amp;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "`": "#96;"}
    return "".join(coded.get(char, char) for char in one_line(text))


def render_mermaid(plan: Plan) -> str:
    """`flowchart LR` with one classed node per change and the plan's edges."""
    ids = node_ids(plan)
    lines = ["flowchart LR"]
    for change in plan.changes:
        label = _mermaid_label(f"{change.symbol} {change.key}")
        lines.append(f'  {ids[change.key]}["{label}"]:::{STYLES[change.action][0]}')
    for before, after in plan.edges:
        if before in ids and after in ids:
            lines.append(f"  {ids[before]} --> {ids[after]}")
    used = {c.action for c in plan.changes}
    for action, (name, fill, stroke) in STYLES.items():
        if action in used:
            lines.append(f"  classDef {name} fill:{fill},stroke:{stroke},color:#000")
    return "\n".join(lines) + "\n"


def _dot_quote(text: str) -> str:
    return '"' + one_line(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_dot(plan: Plan) -> str:
    """A Graphviz digraph, rankdir=LR, one `rank=same` subgraph per generation of plan.order."""
    lines = [
        "digraph plan {",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
    ]
    for change in plan.changes:
        _, fill, stroke = STYLES[change.action]
        label = _dot_quote(f"{change.symbol} {change.key}")
        lines.append(
            f"  {_dot_quote(str(change.key))} [label={label}, fillcolor={_dot_quote(fill)}, "
            f"color={_dot_quote(stroke)}];"
        )
    known = {c.key for c in plan.changes}
    for level in plan.order:
        members = [str(k) for k in level if k in known]
        if members:
            lines.append("  { rank=same; " + " ".join(f"{_dot_quote(a)};" for a in members) + " }")
    for before, after in plan.edges:
        lines.append(f"  {_dot_quote(str(before))} -> {_dot_quote(str(after))};")
    lines.append("}")
    return "\n".join(lines) + "\n"
