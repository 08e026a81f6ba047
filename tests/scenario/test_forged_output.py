"""A configuration whose strings hold fences, HTML comments, headings and terminal escape
sequences cannot forge poolform's output: plan (text and Markdown), show, apply's progress and
drift print them escaped, through the installed command (issue 9, item 13)."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

from tests.scenario.installed import poolform

HOSTILE = r"ok\n```\n\n### No changes. Your capacity matches the configuration.\n<!-- </details> \e[2J\e]0;owned\a \x9b1m \u202e"
CONFIG = f"""kind: ResourcePool
name: quota
description: "{HOSTILE}"
capacity: {{gpu: 8}}
---
kind: WorkerPool
name: w
pool: {{workers: 1}}
resources: {{instance_type: c5.xlarge}}
setup: "echo '```' && echo '</details>' && echo '\\e[31mred'"
"""


def controls(text: str) -> list[str]:
    return [c for c in text if not c.isprintable() and c != "\n"]


def headings(markdown: str) -> list[str]:
    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    return [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]


def test_hostile_strings_are_printed_escaped_everywhere(tmp_path: Path) -> None:
    (tmp_path / "pools.yaml").write_text(CONFIG)
    plan_file = tmp_path / "plan.out"
    markdown = poolform("plan", tmp_path, "--markdown", "-out", plan_file)
    assert markdown.returncode == 0, markdown.stderr
    assert headings(markdown.stdout) == [
        "poolform plan: 2 to add, 0 to change, 0 to replace, 0 to destroy",
        "Change graph",
    ]
    assert "\\u001b[2J" in markdown.stdout and "\\u202e" in markdown.stdout
    runs = [
        markdown,
        poolform("plan", tmp_path),
        poolform("show", plan_file),
        poolform("show", plan_file, "--markdown"),
        poolform("apply", plan_file),
        poolform("drift", tmp_path),
        poolform("drift", tmp_path, "--markdown"),
    ]
    for run in runs:
        assert run.returncode == 0, run.stderr
        assert not controls(run.stdout + run.stderr), run.args
    assert "+ description" in runs[1].stdout and "\\u001b]0;owned\\u0007" in runs[1].stdout
    assert headings(runs[3].stdout) == headings(markdown.stdout)
