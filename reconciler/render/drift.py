"""Drift reports as terminal text and as Markdown for an issue or a chat message. Pure.

Sensitive values are never shown: an attribute marked sensitive prints `(sensitive)` on both
sides, and any salted hash inside a value is masked like in plans. Addresses, attribute names,
ids and messages are escaped for where they land (reconciler/render/escape.py).
"""

from __future__ import annotations

from reconciler.drift.model import AttributeDrift, DriftReport, DriftStatus
from reconciler.render.common import SENSITIVE, comment_marker, fmt
from reconciler.render.escape import code_span, markdown_text, one_line, table_code

FOOTER = (
    "`poolform plan` shows the change that restores the configuration; "
    "`poolform apply --refresh-only` accepts reality into state instead."
)
MARKDOWN_LIMIT = 60_000


def _values(change: AttributeDrift) -> tuple[str, str]:
    if change.sensitive:
        return SENSITIVE, "(sensitive, changed)"
    return fmt(change.expected), fmt(change.actual)


def _ids(ids: dict[str, str]) -> str:
    return ", ".join(f"{one_line(k)} {one_line(v)}" for k, v in sorted(ids.items()))


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _headline(report: DriftReport) -> str:
    if not report.has_drift:
        return (
            f"No drift: {_count(report.checked, 'managed resource')} checked, all as recorded "
            "(a count the scheduler moved inside its bounds is not drift)."
        )
    parts = [f"{_count(len(report.drifted), 'managed resource')} drifted"]
    if report.unmanaged:
        parts.append(
            f"{_count(len(report.unmanaged), 'unmanaged resource')} with this state's tags"
        )
    return f"Drift found: {', '.join(parts)} (checked {report.checked})."


def render_drift_text(report: DriftReport) -> str:
    lines = [_headline(report), ""]
    for drift in report.drifted:
        symbol = "-" if drift.status is DriftStatus.DELETED else "~"
        lines.append(f"  {symbol} {one_line(drift.address)}  ({one_line(drift.reason)})")
        for change in drift.attributes:
            expected, actual = _values(change)
            lines.append(
                f"      {one_line(change.attribute)}: expected {expected}, actual {actual}"
                f"  [owned by the {change.owner}]"
            )
    if report.unmanaged:
        lines += ["", "Unmanaged (tagged with this state, recorded nowhere):"]
        lines += [f"  ? {one_line(u.address)}  ({_ids(u.provider_ids)})" for u in report.unmanaged]
    if report.notes:
        lines += ["", "Not drift:"]
        lines += [f"  {one_line(n.address)}: {one_line(n.message)}" for n in report.notes]
    if report.has_drift:
        lines += ["", FOOTER]
    return "\n".join(lines).rstrip() + "\n"


def render_drift_markdown(report: DriftReport, *, label: str | None = None) -> str:
    """The report as Markdown for an issue; with `label` (its configuration directory) it
    starts with a marker a scheduled workflow finds its issue by:
    `<!-- poolform-drift: LABEL -->`."""
    icon = ":warning:" if report.has_drift else ":white_check_mark:"
    out = [f"### {icon} poolform drift", "", _headline(report), ""]
    if label is not None:
        out = [comment_marker("drift", label), *out]
    if report.drifted:
        out += [
            "| resource | status | attribute | expected | actual | owner |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for drift in report.drifted:
            if not drift.attributes:
                out.append(f"| {table_code(drift.address)} | {drift.status} | | | | |")
            for change in drift.attributes:
                expected, actual = _values(change)
                out.append(
                    f"| {table_code(drift.address)} | {drift.status} "
                    f"| {table_code(change.attribute)} | {table_code(expected)} "
                    f"| {table_code(actual)} | {markdown_text(change.owner)} |"
                )
        out.append("")
    if report.unmanaged:
        out += ["**Unmanaged** (tagged with this state, recorded nowhere):", ""]
        out += [
            f"- {code_span(u.address)}: {markdown_text(_ids(u.provider_ids))}"
            for u in report.unmanaged
        ]
        out.append("")
    if report.notes:
        out += [f"<details><summary>Not drift ({len(report.notes)})</summary>", ""]
        out += [f"- {code_span(n.address)}: {markdown_text(n.message)}" for n in report.notes]
        out += ["", "</details>", ""]
    if report.has_drift:
        out += [FOOTER, ""]
    text = "\n".join(out)
    if len(text) > MARKDOWN_LIMIT:
        cut = text[:MARKDOWN_LIMIT].rsplit("\n", 1)[0]
        text = (
            f"{cut}\n\n_Cut at {MARKDOWN_LIMIT:,} characters: `poolform drift --json` has all._\n"
        )
    return text
