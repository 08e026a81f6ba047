"""The README's rule table lists exactly the rules between documents that validate can report,
and its warnings paragraph names every warning those checks give.

A rule added to reconciler/checks without a row (or a row left for a rule gone) was caught by
no test: the table is how a user reads `[rule]` at the end of a diagnostic. The rules are
read from the checks' source: the literal rule of every `error(...)`, `warning(...)` and
`Finding(severity, rule, ...)` call there.
"""

from __future__ import annotations

import ast
import re

from tests.conftest import ROOT

CHECKS = ROOT / "reconciler" / "checks"


def emitted() -> dict[str, set[str]]:
    """Each severity's rules, as the checks' source passes them."""
    found: dict[str, set[str]] = {"error": set(), "warning": set()}
    for path in sorted(CHECKS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
                continue
            args = node.args
            if node.func.id in ("error", "warning") and len(args) >= 3:
                severity, rule = node.func.id, args[2]
            elif node.func.id == "Finding" and len(args) >= 2:
                assert isinstance(args[0], ast.Constant), ast.unparse(node)
                severity, rule = str(args[0].value), args[1]
            else:
                continue
            if isinstance(rule, ast.Name) and rule.id == "rule":
                continue  # common.py's error()/warning() passing their own argument on
            assert isinstance(rule, ast.Constant), f"{path.name}: {ast.unparse(node)}"
            found[severity].add(str(rule.value))
    return found


def readme_section() -> str:
    text = (ROOT / "README.md").read_text()
    return text.split("### What `validate` checks", 1)[1].split("\n## ", 1)[0]


def table_rules() -> set[str]:
    table = readme_section().split("| rule | what it catches |", 1)[1].split("\n\n", 1)[0]
    rules: set[str] = set()
    for row in table.splitlines()[2:]:
        first = row.split("|")[1]
        rules.update(re.findall(r"`([a-z][a-z0-9-]*)`", first))
    return rules


def warning_rules() -> set[str]:
    paragraph = readme_section().split("Warnings (`warning:` prefix", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"`([a-z]+(?:-[a-z]+)+)`", paragraph))


def test_the_rule_table_lists_exactly_the_errors_the_checks_report() -> None:
    assert table_rules() == emitted()["error"]


def test_the_warnings_paragraph_names_every_warning_the_checks_give() -> None:
    assert emitted()["warning"] <= warning_rules()


def reason_table() -> set[str]:
    text = (ROOT / "README.md").read_text()
    table = text.split("| code | means |", 1)[1].split("\n\n", 1)[0]
    codes: set[str] = set()
    for row in table.splitlines()[2:]:
        codes.update(re.findall(r"`([a-z_]+)`", row.split("|")[1]))
    return codes


def test_the_reasons_table_explains_every_reason_a_waiting_or_rejected_job_shows() -> None:
    """Every code reasons.py lists before the lifecycle events (why a job waits, went back to
    the queue, or was rejected): `reserved_for_head` had no row. Each row is a real code."""
    from reconciler.scheduler.reasons import ReasonCode

    codes = list(ReasonCode)
    waiting = {c.value for c in codes[: codes.index(ReasonCode.SUBMITTED)]}
    assert waiting <= reason_table()
    assert reason_table() <= {c.value for c in codes}


LOADING = [*sorted((ROOT / "reconciler" / "loading").glob("*.py")), ROOT / "reconciler/errors.py"]


def loading_rules() -> set[str]:
    """The literal rules the loader reports: `Finding`/`Diagnostic(severity, rule, ...)`,
    `YamlProblem(..., rule)` and any `rule=`."""
    found: set[str] = set()
    for path in LOADING:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
            given = [k.value for k in node.keywords if k.arg == "rule"]
            if name in ("Finding", "Diagnostic") and len(node.args) >= 2:
                given.append(node.args[1])
            if name == "YamlProblem" and len(node.args) >= 2:  # (message, *position, rule)
                given.append(node.args[-1])
            found.update(str(g.value) for g in given if isinstance(g, ast.Constant) and g.value)
    return found


def test_what_validate_checks_names_every_rule_the_loader_reports() -> None:
    """Rules of files, syntax and models: the README named `yaml-number` and `yaml-version`
    but not `yaml-tag`, `unknown-field`, `file-too-large`..."""
    named = set(re.findall(r"`\[?([a-z]+(?:-[a-z0-9]+)*)\]?`", readme_section()))
    assert loading_rules() - named == set()
