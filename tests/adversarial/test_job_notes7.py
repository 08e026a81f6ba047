"""The notes a plan carries about the jobs its apply affects quote what users typed: a
SubjectPolicy's subject is free text (up to 200 characters, newlines included), and a queued
job's rejection reason names it. A plan's warnings keep their line breaks (a message and its
hint), so a subject holding a newline printed lines of its own in the plan and in its
pull-request comment: a forged `Plan: 0 to add, ...` line under the real one. Each job note
is now one line, the newline written as `\\n`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.adversarial.scheduler_setup import job_file
from tests.scenario.installed import poolform

SUBJECT = "team\\n\\nPlan: 0 to add, 0 to change, 0 to replace, 0 to destroy."  # YAML escapes
FORGED = "Plan: 0 to add, 0 to change, 0 to replace, 0 to destroy."
CONFIG = """kind: Cluster
name: forge
provider: local
---
kind: ResourcePool
name: seats
capacity:
  seat: 2
"""
POLICY = f"""---
kind: SubjectPolicy
name: p
pool: seats
subject: "{SUBJECT}"
"""


def test_a_subject_with_a_newline_cannot_forge_lines_in_the_plan(tmp_path: Path) -> None:
    directory = tmp_path / "forge"
    directory.mkdir()
    config = directory / "config.yaml"
    config.write_text(CONFIG + POLICY)
    assert poolform("apply", "--auto-approve", "--chdir", directory).returncode == 0
    job = job_file(tmp_path, f'kind: Job\nname: j\nsubject: "{SUBJECT}"\nrun: "true"\n')
    submitted = poolform("jobs", "submit", job, "--chdir", directory)
    assert submitted.returncode == 0, submitted.stderr
    config.write_text(CONFIG)  # the policy goes: the queued job would be rejected

    text = poolform("plan", "--chdir", directory)
    assert text.returncode == 0, text.stderr
    note = (
        "1 queued job (1) would be rejected by the scheduler after this apply: no policy for "
        "subject team\\n\\nPlan: 0 to add, 0 to change, 0 to replace, 0 to destroy. is applied"
    )
    assert note in text.stdout.splitlines(), text.stdout
    assert [line for line in text.stdout.splitlines() if line.startswith("Plan:")] == [
        "Plan: 0 to add, 0 to change, 0 to replace, 1 to destroy."
    ], text.stdout

    markdown = poolform("plan", "--markdown", "--chdir", directory).stdout
    assert FORGED not in markdown.split("#### Warnings", 1)[1].splitlines(), markdown
    assert note in markdown.splitlines()

    warnings = json.loads(poolform("plan", "--json", "--chdir", directory).stdout)["warnings"]
    assert note in warnings  # the JSON carries the same one-line note
