"""The pull-request comment of a plan, as `poolform plan --markdown` prints it."""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

from tests.scenario.installed import poolform

WORKERS = """kind: WorkerPool
name: cpu-workers
pool: {workers: 2}
resources: {instance_type: c5.xlarge}
file_mounts: {/data: ./data}
setup: echo ready
"""


def fences(markdown: str) -> list[tuple[str, str]]:
    tokens = MarkdownIt("commonmark").parse(markdown)
    return [(t.info, t.content) for t in tokens if t.type == "fence"]


def test_the_comment_carries_the_validation_warnings_with_their_code_intact(
    tmp_path: Path,
) -> None:
    (tmp_path / "workers.yaml").write_text(WORKERS)
    (tmp_path / "data").mkdir()
    validated = poolform("validate", tmp_path)
    warning = next(line for line in validated.stderr.splitlines() if "warning:" in line)
    assert "`cpu-workers`" in warning  # the warning quotes a name as code

    comment = poolform("plan", tmp_path, "--markdown")
    assert comment.returncode == 0, comment.stderr
    assert "#### Warnings" in comment.stdout
    assert ("text", warning.replace(str(tmp_path) + "/", "") + "\n") in [
        (info, content.replace(str(tmp_path) + "/", "")) for info, content in fences(comment.stdout)
    ]
