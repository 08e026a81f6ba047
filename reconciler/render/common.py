"""What every renderer shares: masking, value formatting, attribute paths and the diff tree.

Pure functions of plan data. Sensitive values are recognised two ways: an AttributeChange marked
`sensitive`, or any string beginning with the salted-hash prefix the expansion writes. Both are
shown as `(sensitive)`; a hash is never printed.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from reconciler.plan.expand import SENSITIVE_PREFIX
from reconciler.plan.model import Action, AttributeChange, Plan, ResourceChange
from reconciler.render.escape import one_line

SENSITIVE = "(sensitive)"
KNOWN_AFTER_APPLY = "(known after apply)"
NO_CHANGES = "No changes. Your capacity matches the configuration."
# A destroy plan with nothing to delete (an empty state, or a directory never applied): that
# the capacity "matches the configuration" is not what was asked, and reads as if it had been
# applied (Terraform: "No objects need to be destroyed").
NOTHING_TO_DESTROY = "No changes. Nothing recorded in the state needs to be destroyed."

Step = str | int


def is_hash(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(SENSITIVE_PREFIX)


def mask(value: Any) -> Any:
    """`value` with every sensitive hash inside it replaced by `(sensitive)`."""
    if is_hash(value):
        return SENSITIVE
    if isinstance(value, dict):
        return {k: mask(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [mask(v) for v in value]
    return value


def fmt(value: Any, *, sensitive: bool = False) -> str:
    """One value as HCL-ish text on one line: strings quoted, null, true/false, compact JSON for
    containers; what JSON leaves raw and a terminal would act on (C1 controls, bidi overrides)
    escaped too."""
    if sensitive and value is not None:
        return SENSITIVE
    kind = type(value)
    if kind is str:  # the common cases first: a plan formats a value per attribute line
        if value.startswith(SENSITIVE_PREFIX):
            return SENSITIVE
        if value.isprintable() and '"' not in value and "\\" not in value:
            return f'"{value}"'
        return one_line(json.dumps(value, ensure_ascii=False))
    if kind is int:
        return int.__repr__(value)  # as json.dumps writes it
    if is_hash(value):
        return SENSITIVE
    if isinstance(value, str):
        if value.isprintable() and '"' not in value and "\\" not in value:
            return f'"{value}"'
        return one_line(json.dumps(value, ensure_ascii=False))
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    text = json.dumps(mask(value), ensure_ascii=False, separators=(", ", ": "))
    return one_line(text.replace(f'"{SENSITIVE}"', SENSITIVE))


def summary_line(plan: Plan) -> str:
    if not plan.has_changes:
        return NOTHING_TO_DESTROY if plan.options.destroy else NO_CHANGES
    s = plan.summary
    return (
        f"Plan: {s.add} to add, {s.change} to change, {s.replace} to replace, "
        f"{s.destroy} to destroy."
    )


def dotted(steps: list[Step]) -> str:
    text = ""
    for step in steps:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else str(step))
    return text


@functools.lru_cache(maxsize=4096)
def key_step(key: str) -> str:
    """A map key as a step of a shown path: `.gpu`, or quoted, `["example.com"]`, when it is
    not a plain name (a custom resource key holding a `.`, a file_mounts target), so that
    `capacity["example.com"]` never reads as a key `com` nested in `example` (validate and
    `show` write paths so too: reconciler/loading/configuration.py's `dotted`). Cached: a
    plan's keys repeat across its resources."""
    if _SHOWN_PLAIN.fullmatch(key):
        return f".{key}"
    return f"[{json.dumps(key, ensure_ascii=False)}]"


def shown_path(path: str, *roots: Any) -> str:
    """A plan's attribute path (`capacity.example.com`, dotted as plan JSON keeps it) as the
    text and Markdown views show it, its keys read against the attribute maps `roots`."""
    text = ""
    for step in split_path(path, *roots):
        if isinstance(step, int):
            text += f"[{step}]"
        else:
            text += key_step(step) if text else _first_step(step)
    return text


def _first_step(key: str) -> str:
    return key if _SHOWN_PLAIN.fullmatch(key) else key_step(key)


_SHOWN_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


_INDEX = re.compile(r"\[(\d+)\]")
_PLAIN_KEY = re.compile(r"[^.\[]+")


def _child(node: Any, step: Step) -> Any:
    if isinstance(step, int):
        return node[step] if isinstance(node, list) and -len(node) <= step < len(node) else None
    return node.get(step) if isinstance(node, dict) else None


def split_path(path: str, *roots: Any) -> list[Step]:
    """`partitions[0].rules[1].selector.team` as steps. The dotted form is ambiguous for map keys
    holding `.` or `[` (file_mounts targets, custom resource keys), so the keys actually present
    in `roots` (the before/after attributes) are preferred, longest first."""
    steps: list[Step] = []
    nodes = list(roots)
    rest = path
    while rest:
        index = _INDEX.match(rest)
        if index and steps:
            steps.append(int(index.group(1)))
            rest = rest[index.end() :]
            nodes = [_child(n, steps[-1]) for n in nodes]
            continue
        if steps and rest.startswith("."):
            rest = rest[1:]
        keys = sorted(
            {k for n in nodes if isinstance(n, dict) for k in n if isinstance(k, str)},
            key=lambda k: (-len(k), k),
        )
        key = next(
            (
                k
                for k in keys
                if k and rest.startswith(k) and rest[len(k) : len(k) + 1] in ("", ".", "[")
            ),
            None,
        )
        if key is None:
            plain = _PLAIN_KEY.match(rest)
            key = plain.group(0) if plain else rest
        steps.append(key)
        rest = rest[len(key) :]
        nodes = [_child(n, key) for n in nodes]
    return steps


@dataclass
class Node:
    """A level of the nested attribute diff: children by step, or a leaf change."""

    children: dict[Step, Node] = field(default_factory=dict)
    change: AttributeChange | None = None

    @property
    def is_list(self) -> bool:
        return bool(self.children) and all(isinstance(k, int) for k in self.children)


def diff_tree(change: ResourceChange) -> Node:
    """The attribute changes of `change`, grouped by top-level attribute and nested by path."""
    root = Node()
    for attr in change.attributes:
        node = root
        for step in split_path(attr.path, change.before, change.after):
            node = node.children.setdefault(step, Node())
        node.change = attr
    return root


def leaf_symbol(attr: AttributeChange) -> str:
    if attr.known_after_apply:
        return "+" if attr.old is None else "~"
    if attr.old is None and attr.new is not None:
        return "+"
    if attr.new is None and attr.old is not None:
        return "-"
    return "~"


_WRITTEN = re.compile(r"^\s*\+?([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*$")


def as_written(value: Any, written: str | None) -> str:
    """A value as the configuration wrote it (`256Gi`, `10m`) when it did, else `fmt`."""
    if written is not None and isinstance(value, int | float) and not isinstance(value, bool):
        return one_line(written)
    return fmt(value)


def in_unit_of(old: Any, new: Any, written: str | None) -> str:
    """`old` in the unit `new` was written in (`256Gi` beside `512Gi`), when it is a whole (or
    short decimal) number of that unit; else `fmt(old)`. State keeps numbers, not spellings:
    the unit of the new value is the one the reader is thinking in."""
    match = _WRITTEN.match(written or "")
    numbers = (old, new)
    if not match or any(isinstance(v, bool) or not isinstance(v, int | float) for v in numbers):
        return fmt(old)
    amount, unit = Decimal(match.group(1)), match.group(2)
    try:
        scaled = Decimal(str(old)) * amount / Decimal(str(new))
    except (InvalidOperation, ZeroDivisionError):
        return fmt(old)
    if scaled != scaled.quantize(Decimal("0.001")):
        return fmt(old)
    text = format(scaled.normalize(), "f")
    return f"{text}{unit}"


def leaf_value(attr: AttributeChange, written: Mapping[str, str] | None = None) -> str:
    """The right-hand side of an attribute line: `old -> new`, `new`, or a mask. Quantities
    and durations the configuration wrote with a unit are shown in it (`written`: by path)."""
    if attr.sensitive or is_hash(attr.old) or is_hash(attr.new):
        return SENSITIVE
    if attr.known_after_apply:
        return KNOWN_AFTER_APPLY if attr.old is None else f"{fmt(attr.old)} -> {KNOWN_AFTER_APPLY}"
    spelled = (written or {}).get(attr.path)
    symbol = leaf_symbol(attr)
    if symbol == "+":
        return as_written(attr.new, spelled)
    if symbol == "-":
        return f"{fmt(attr.old)} -> null"
    return f"{in_unit_of(attr.old, attr.new, spelled)} -> {as_written(attr.new, spelled)}"


def shown_written(change: ResourceChange) -> dict[str, str]:
    """`change.written` (spellings by plan path) by the paths `flatten` shows."""
    return {shown_path(path, change.after): text for path, text in change.written.items()}


def flatten(value: Any) -> list[tuple[str, Any]]:
    """Leaves of a nested value as (shown path, leaf); nulls skipped, scalar lists kept whole.
    A key that is not a plain name is quoted (`key_step`): look a plan's paths up with
    `shown_path`."""
    paths: list[str] = []
    leaves: list[Any] = []
    flatten_into(value, paths, leaves)
    return list(zip(paths, leaves, strict=True))


def flatten_into(value: Any, paths: list[str], leaves: list[Any]) -> None:
    """`flatten`, as two lists appended to: the paths, and the leaves at them."""
    if _nested(value):  # a bare scalar has no path: nothing to list
        _leaves(value, "", paths, leaves)


def _nested(value: Any) -> bool:
    """A value whose parts are listed one by one: a non-empty map, or a list holding maps or
    lists."""
    if isinstance(value, dict):
        return bool(value)
    return isinstance(value, list) and any(isinstance(v, dict | list) for v in value)


def _leaves(value: Any, path: str, paths: list[str], leaves: list[Any]) -> None:
    # Paths are built as text step by step, as `shown_path` writes them, and only nested values
    # cost a call: a plan of 10,000 resources lists about 100,000 leaves.
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        if isinstance(key, int):
            step = f"{path}[{key}]"
        elif path:
            step = path + key_step(key)
        else:
            step = _first_step(key)
        if item is None:
            continue
        if isinstance(item, dict | list) and _nested(item):
            _leaves(item, step, paths, leaves)
        else:
            paths.append(step)
            leaves.append(item)


def header_phrase(change: ResourceChange) -> str:
    """`will be created`, `will be updated in place (resize)`, `must be replaced (reason)`."""
    if change.action is Action.CREATE:
        return "will be created"
    if change.action is Action.UPDATE:
        return f"will be updated in place ({change.update_kind or change.reason})"
    if change.action is Action.REPLACE:
        return f"must be replaced ({change.reason})"
    if change.action is Action.DELETE:
        return "will be destroyed"
    return "has no changes"


def rolling_line(change: ResourceChange) -> str | None:
    r = change.rolling
    if r is None:
        return None
    return (
        f"# rolling: {rolling_batches(r.instances, r.batch_size)} "
        f"(max_surge {r.max_surge}, max_unavailable {r.max_unavailable})"
    )


def rolling_batches(instances: int, batch_size: int) -> str:
    """`10 instances in 5 batches of 2`, exact for every count: `9 instances in 5 batches of
    2, the last of 1` (it read `5 batches of 2`: ten), `2 instances in 1 batch`, `1 instance
    in 1 batch` (it read `1 instances in 1 batches of 1`)."""
    full, rest = divmod(instances, batch_size)
    batches = full + (1 if rest else 0)
    counted = f"{instances} instance{'' if instances == 1 else 's'}"
    if batches == 1:
        return f"{counted} in 1 batch"
    if not rest:
        return f"{counted} in {batches} batches of {batch_size}"
    return f"{counted} in {batches} batches of {batch_size}, the last of {rest}"


LEGEND = {
    "+": "create",
    "~": "update in place",
    "+/-": "create replacement and then destroy",
    "-/+": "destroy and then create replacement",
    "-": "destroy",
}


def comment_marker(kind: str, label: str) -> str:
    """`<!-- poolform-plan: pr-12 -->`: the stable first line of a Markdown comment, which a
    workflow searches for to update its comment instead of adding one. The label keeps only
    characters that cannot end the HTML comment or break its line."""
    safe = re.sub(r"[^A-Za-z0-9._/#:@+=-]", "_", label).replace("--", "-_") or "_"
    return f"<!-- poolform-{kind}: {safe} -->"
