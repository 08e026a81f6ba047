"""`poolform fmt [DIR | FILE | -] [--check] [--diff] [--recursive]`: one canonical layout,
comments kept, nothing else changed; a file that does not parse is never touched."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from reconciler.checks import load_configuration
from tests.conftest import EXAMPLES
from tests.scenario.installed import poolform_command

MESSY = """\
# yaml-language-server: $schema=../schemas/json/MachinePool.json
# The shared pool.
kind:   MachinePool
name: shared
machine_types:
- machine_type: cpu     # cheap
  launch_templates:
      - instance_type: m5.large
  partitions: [{name: any,
     size: 2}]
"""
CANONICAL = """\
# yaml-language-server: $schema=../schemas/json/MachinePool.json
# The shared pool.
kind: MachinePool
name: shared
machine_types:
  - machine_type: cpu   # cheap
    launch_templates:
      - instance_type: m5.large
    partitions: [{name: any, size: 2}]
"""


def test_check_lists_what_would_change_exits_3_and_touches_nothing(run, write) -> None:
    directory = write({"pool.yaml": MESSY, "cluster.yaml": "kind: Cluster\nname: main\n"})
    result = run("fmt", directory, "--check")
    assert result.code == 3
    assert result.out.splitlines() == [str(directory / "pool.yaml")]
    assert (directory / "pool.yaml").read_text() == MESSY


def test_fmt_rewrites_in_the_canonical_layout_keeping_comments_and_meaning(run, write) -> None:
    directory = write({"pool.yaml": MESSY})
    before = load_configuration(directory).documents[0].model
    (directory / "pool.yaml").chmod(0o640)
    result = run("fmt", directory)
    assert result.code == 0
    assert result.out.splitlines() == [str(directory / "pool.yaml")]
    assert (directory / "pool.yaml").read_text() == CANONICAL
    assert load_configuration(directory).documents[0].model == before
    assert (directory / "pool.yaml").stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in directory.iterdir()) == ["pool.yaml"]  # no temporary left
    again = run("fmt", directory, "--check")
    assert (again.code, again.out) == (0, "")


def test_comments_before_and_between_documents_are_kept(run, write) -> None:
    text = (
        "# header, before any document\n\n---\n# the pool\nkind: ResourcePool\nname: q\n"
        "capacity:\n    gpu: 4   # four\n--- # the policy\nkind: SubjectPolicy\nname: p\n"
        "subject: s\npool: q\n# trailing\n"
    )
    directory = write({"a.yaml": text})
    assert run("fmt", directory).code == 0
    formatted = (directory / "a.yaml").read_text()
    for comment in (
        "# header, before any document",
        "# the pool",
        "# four",
        "--- # the policy",
        "# trailing",
    ):
        assert comment in formatted
    assert "capacity:\n  gpu: 4" in formatted


@pytest.mark.parametrize(
    "bad",
    [b"kind: Cluster\nname: [c\n", b"a: &x 1\nb: *x\n", b"a: 1\na: 2\n", b"name: \xff\n"],
    ids=["syntax", "alias", "duplicate-key", "not-utf8"],
)
def test_a_file_that_does_not_parse_is_an_error_and_left_alone(run, write, bad: bytes) -> None:
    directory = write({"bad.yaml": bad, "pool.yaml": MESSY})
    result = run("fmt", directory)
    assert result.code == 1
    assert "bad.yaml" in result.err
    assert (directory / "bad.yaml").read_bytes() == bad
    assert (directory / "pool.yaml").read_text() == CANONICAL  # the others are still formatted


def test_fmt_of_one_file_and_of_an_unreadable_entry(run, write) -> None:
    directory = write({"pool.yaml": MESSY})
    os.symlink("missing.yaml", directory / "gone.yaml")
    assert run("fmt", directory / "pool.yaml", "--check").code == 3
    result = run("fmt", directory)
    assert result.code == 1
    assert "gone.yaml" in result.err


def test_the_examples_are_in_the_canonical_layout(run) -> None:
    """Every poolform file of examples/, the job files under them too."""
    result = run("fmt", EXAMPLES, "--check", "--recursive", "--diff")
    assert (result.code, result.out) == (0, ""), result.out + result.err


NULLS = """\
kind: Job
name: j
resources:
  accelerators: {H100:1, H200:1}
envs:
  EMPTY:
  NONE: null
  TILDE: ~
run: echo ok
"""


def test_nulls_stay_as_written(run, write) -> None:
    """SkyPilot's set of acceptable accelerators, `{H100:1, H200:1}`, is a flow mapping whose
    values are null: it was rewritten `{H100:1: null, H200:1: null}`, and `null`/`~` as empty."""
    directory = write({"job.yaml": NULLS})
    result = run("fmt", directory, "--check")
    assert (result.code, result.out) == (0, ""), result.out + result.err


def test_a_rare_null_shape_is_still_laid_out_with_its_meaning(run, write) -> None:
    # Kept as written, `{y}` inside a flow sequence would lose its braces (and become "y").
    directory = write({"a.yaml": "kind:   Cluster\nname: c\nx: [a, {y}]\n"})
    assert run("fmt", directory).code == 0
    assert (directory / "a.yaml").read_text() == "kind: Cluster\nname: c\nx: [a, y: null]\n"


def test_diff_shows_each_change_and_check_keeps_the_file(run, write) -> None:
    directory = write({"pool.yaml": MESSY})
    result = run("fmt", directory, "--check", "--diff")
    assert result.code == 3
    shown = str(directory / "pool.yaml")
    assert result.out.startswith(f"--- old/{shown}\n+++ new/{shown}\n@@ ")
    assert "-kind:   MachinePool\n+kind: MachinePool\n" in result.out
    assert (directory / "pool.yaml").read_text() == MESSY
    written = run("fmt", directory, "--diff")
    assert (written.code, written.out) == (0, result.out)
    assert (directory / "pool.yaml").read_text() == CANONICAL


def test_recursive_takes_poolform_files_below_and_nothing_else(run, write) -> None:
    workflow = "on:   push\njobs: {}\n"  # another tool's YAML: not poolform's to lay out
    directory = write(
        {
            "pool.yaml": MESSY,
            "team/a/pool.yaml": MESSY,
            "team/jobs/job.yaml": "kind:   Job\nname: j\nrun: 'true'\n",
            "team/ci.yml": workflow,
            "team/chart.yaml": "a: {{ .Values.x }}\n",
            ".hidden/pool.yaml": MESSY,
        }
    )
    (directory / "linked").symlink_to(directory / "team" / "a")
    alone = run("fmt", directory)
    assert alone.out.splitlines() == [str(directory / "pool.yaml")]
    assert (directory / "team" / "a" / "pool.yaml").read_text() == MESSY  # not below by default
    result = run("fmt", directory, "--recursive")
    assert result.code == 0, result.err
    assert result.out.splitlines() == [
        str(directory / "team" / "a" / "pool.yaml"),
        str(directory / "team" / "jobs" / "job.yaml"),
    ]
    assert (
        directory / "team" / "jobs" / "job.yaml"
    ).read_text() == "kind: Job\nname: j\nrun: 'true'\n"
    assert (directory / "team" / "ci.yml").read_text() == workflow
    assert (directory / ".hidden" / "pool.yaml").read_text() == MESSY


def test_recursive_takes_a_directory(run, write) -> None:
    directory = write({"pool.yaml": MESSY})
    result = run("fmt", directory / "pool.yaml", "--recursive")
    assert result.code == 1
    assert "--recursive takes a directory" in result.err
    assert (directory / "pool.yaml").read_text() == MESSY


def test_standard_input_is_laid_out_to_standard_output() -> None:
    """`poolform fmt -`, as an editor calls `terraform fmt -`."""
    laid_out = subprocess.run(
        [*poolform_command(), "fmt", "-"], input=MESSY, capture_output=True, text=True
    )
    assert (laid_out.returncode, laid_out.stdout) == (0, CANONICAL)
    same = subprocess.run(
        [*poolform_command(), "fmt", "-"], input=CANONICAL, capture_output=True, text=True
    )
    assert (same.returncode, same.stdout) == (0, CANONICAL)
    check = subprocess.run(
        [*poolform_command(), "fmt", "--check", "-"], input=MESSY, capture_output=True, text=True
    )
    assert (check.returncode, check.stdout) == (3, "")
    diff = subprocess.run(
        [*poolform_command(), "fmt", "--diff", "-"], input=MESSY, capture_output=True, text=True
    )
    assert diff.returncode == 0
    assert diff.stdout.startswith("--- old/<stdin>\n+++ new/<stdin>\n")
    broken = subprocess.run(
        [*poolform_command(), "fmt", "-"], input="kind: [\n", capture_output=True, text=True
    )
    assert (broken.returncode, broken.stdout) == (1, "")
    assert broken.stderr.startswith("<stdin>:2:1: error: invalid YAML")
    recursive = subprocess.run(
        [*poolform_command(), "fmt", "--recursive", "-"],
        input=MESSY,
        capture_output=True,
        text=True,
    )
    assert recursive.returncode == 1
    assert "not standard input" in recursive.stderr


def test_a_linked_file_is_rewritten_through_its_link(run, write) -> None:
    directory = write({"real/pool.yaml": MESSY})
    (directory / "pool.yaml").symlink_to(directory / "real" / "pool.yaml")
    assert run("fmt", directory).code == 0
    assert (directory / "pool.yaml").is_symlink()
    assert (directory / "real" / "pool.yaml").read_text() == CANONICAL


def test_a_link_leading_outside_the_directory_is_left_with_a_warning(
    run, write, tmp_path: Path
) -> None:
    directory = write({"real/pool.yaml": MESSY})
    config = tmp_path / "config"
    config.mkdir()
    (config / "pool.yaml").symlink_to(directory / "real" / "pool.yaml")
    result = run("fmt", config)
    assert result.code == 0, result.err
    assert "warning:" in result.err and "[link-outside]" in result.err
    assert (directory / "real" / "pool.yaml").read_text() == MESSY


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_file_in_a_read_only_directory_is_rewritten_in_place(run, write) -> None:
    """As `terraform fmt`: fmt writes into the file, so its directory need not be writable."""
    directory = write({"pool.yaml": MESSY})
    directory.chmod(0o555)
    try:
        result = run("fmt", directory)
    finally:
        directory.chmod(0o755)
    assert result.code == 0, result.err
    assert (directory / "pool.yaml").read_text() == CANONICAL


def test_standard_input_without_end_is_refused_at_the_size_limit() -> None:
    with open("/dev/zero", "rb") as zeros:
        endless = subprocess.run(
            [*poolform_command(), "fmt", "-"], stdin=zeros, capture_output=True, timeout=60
        )
    assert (endless.returncode, endless.stdout) == (1, b"")
    assert b"standard input is over 32 MiB" in endless.stderr
