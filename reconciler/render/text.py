"""The terminal rendering of a plan, in Terraform's shape.

    # machine_pool.demo.machine_type.cpu will be updated in place (resize)
      ~ machine_type "machine_pool.demo.machine_type.cpu" {
          ~ partitions = [
              ~ [0] = {
                  ~ size = 4 -> 6
                }
            ]
        }

    Plan: 0 to add, 1 to change, 0 to replace, 0 to destroy.

Pure and deterministic: the same plan gives the same bytes. ANSI colour only with color=True,
and only the renderer's own: every name, key, reason and value passes through one_line, so input
cannot print a line, a colour or a cursor movement of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from reconciler.plan.model import Action, Plan, ResourceChange
from reconciler.plan.reasons import UNDOES_DRIFT, Reason
from reconciler.render.common import (
    KNOWN_AFTER_APPLY,
    LEGEND,
    Node,
    as_written,
    diff_tree,
    flatten_into,
    fmt,
    header_phrase,
    key_step,
    leaf_symbol,
    leaf_value,
    rolling_line,
    shown_written,
    summary_line,
)
from reconciler.render.escape import one_line, printable

_CODES = {"+": "32", "~": "33", "-": "31", "+/-": "35", "-/+": "35", "!": "35", "#": "1"}
FORCES = "# forces replacement"

Paint = Callable[[str, str], str]
Shapes = dict[tuple[str, ...], list[str]]  # attribute paths -> the padded `+ path = ` prefixes


def _painter(color: bool) -> Paint:
    def paint(text: str, kind: str) -> str:
        if not color or kind not in _CODES:
            return text
        return f"\x1b[{_CODES[kind]}m{text}\x1b[0m"

    return paint


def render_text(plan: Plan, *, color: bool = False) -> str:
    """The whole plan as terminal text, ending with the `Plan: ...` line (and a newline)."""
    paint = _painter(color)
    lines: list[str] = []
    shapes: Shapes = {}
    if plan.has_changes:
        lines += _legend(plan, paint)
        lines += ["", "poolform will perform the following actions:"]
        for change in plan.changes:
            lines.append("")
            _change_lines(change, paint, lines, shapes)
        lines.append("")
    lines.append(summary_line(plan))
    for warning in plan.warnings:
        lines += ["", *printable(warning).splitlines()]
    return "\n".join(lines) + "\n"  # one join: a plan of 10,000 resources has ~150,000 lines


def _legend(plan: Plan, paint: Paint) -> list[str]:
    used = {c.symbol for c in plan.changes}
    lines = ["Resource actions are indicated with the following symbols:"]
    for symbol, words in LEGEND.items():
        if symbol in used:
            lines.append(f"{paint(symbol.rjust(3), symbol)} {words}")
    return lines


def render_change(change: ResourceChange, paint: Paint | None = None) -> list[str]:
    """One change: the `# address ...` header and its resource block."""
    lines: list[str] = []
    _change_lines(change, paint or _painter(False), lines, {})
    return lines


def _change_lines(change: ResourceChange, paint: Paint, lines: list[str], shapes: Shapes) -> None:
    """`render_change`, appended to `lines`."""
    action = change.action
    symbol = change.symbol
    key = one_line(change.address if change.cleanup_ids is None else str(change.key))
    lines.append(paint(f"  # {key} {one_line(header_phrase(change))}", "#"))
    # A create says why only when it is not simply new (recreated, adopted after a crash); an
    # update says why when it undoes drift.
    if (
        action is Action.DELETE
        or (action is Action.CREATE and change.reason_code not in (Reason.NEW, None))
        or (action is Action.UPDATE and change.reason_code in UNDOES_DRIFT)
    ):
        lines.append(f"  # (because {one_line(change.reason)})")
    head = f'{paint(symbol.rjust(3), symbol)} {one_line(change.resource_type)} "{key}" {{'
    lines.append(head)
    if action is Action.CREATE:
        lines += _create_body(change, paint, shapes)
    elif action is Action.DELETE:
        lines += _delete_body(change, paint)
    else:
        lines += tree_lines(diff_tree(change), 6, paint, change.written)
    if change.rolling is not None:
        lines.append(" " * 6 + str(rolling_line(change)))
    lines.append("    }")


def tree_lines(
    node: Node, indent: int, paint: Paint, written: Mapping[str, str] | None = None
) -> list[str]:
    """Nested attribute lines below `node`, siblings' `=` aligned."""
    pad = " " * indent
    leaves = [k for k, child in node.children.items() if not child.children]
    width = max((len(_label(k)) for k in leaves), default=0)
    lines: list[str] = []
    for step, child in node.children.items():
        label = _label(step)
        if child.change is not None:
            sym = leaf_symbol(child.change)
            name = label.ljust(width) if not child.children else label
            line = f"{pad}{paint(sym, sym)} {name} = {leaf_value(child.change, written)}"
            if child.change.forces_replacement:
                line += " " + paint(FORCES, "!")
            lines.append(line)
        if child.children:
            opener, closer = ("[", "]") if child.is_list else ("{", "}")
            lines.append(f"{pad}{paint('~', '~')} {label} = {opener}")
            lines += tree_lines(child, indent + 4, paint, written)
            lines.append(f"{pad}  {closer}")
    return lines


def _label(step: str | int) -> str:
    """A step of the nested update view: `[0]`, `gpu`, or a key that is not a plain name
    quoted, `"example.com"`, as Terraform writes one inside a block."""
    if isinstance(step, int):
        return f"[{step}]"
    shown = key_step(step)
    return one_line(step if shown.startswith(".") else shown[1:-1])


def _create_body(change: ResourceChange, paint: Paint, shapes: Shapes) -> list[str]:
    paths = [a.path for a in change.attributes if a.known_after_apply]
    texts = [KNOWN_AFTER_APPLY] * len(paths)
    known = len(paths)
    leaves: list[Any] = []
    flatten_into(change.after or {}, paths, leaves)
    texts += [fmt(leaf) for leaf in leaves]
    # Quantities and durations are shown as the configuration wrote them (`written`: a few
    # paths at most, looked up in the list of paths rather than the other way round).
    for path, spelled in shown_written(change).items():
        index = known - 1
        while (index := _index(paths, path, index + 1)) >= 0:
            texts[index] = as_written(leaves[index - known], spelled)
    # Resources of a kind share their attribute paths, so the padded left-hand sides are made
    # once per set of paths, not once per resource.
    shape = tuple(paths)
    prefixes = shapes.get(shape)
    if prefixes is None:
        labels = [one_line(path) for path in paths]
        width = max(map(len, labels), default=0)
        plus = paint("+", "+")
        prefixes = shapes[shape] = [f"      {plus} {label.ljust(width)} = " for label in labels]
    return list(map(str.__add__, prefixes, texts))


def _index(items: list[str], item: str, start: int) -> int:
    """Where `item` is in `items` from `start` on, or -1."""
    try:
        return items.index(item, start)
    except ValueError:
        return -1


def _delete_body(change: ResourceChange, paint: Paint) -> list[str]:
    before = change.before or {}
    scalars = [
        (one_line(k), v)
        for k, v in before.items()
        if v is not None and not isinstance(v, dict | list)
    ]
    width = max((len(k) for k, _ in scalars), default=0)
    lines = [f"      {paint('-', '-')} {k.ljust(width)} = {fmt(v)} -> null" for k, v in scalars]
    hidden = sum(1 for v in before.values() if isinstance(v, dict | list))
    if hidden:
        lines.append(f"        # ({hidden} nested attribute{'s' if hidden != 1 else ''} hidden)")
    return lines
