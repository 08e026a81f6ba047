"""`poolform fmt [DIR] [--check]`: one canonical layout, comments kept, nothing else changed;
a file that does not parse is never touched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reconciler.checks import load_configuration
from tests.conftest import EXAMPLES

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


@pytest.mark.parametrize(
    "directory",
    sorted(p for p in EXAMPLES.iterdir() if p.is_dir() and p.name != "ci"),
    ids=lambda p: p.name,
)
def test_the_examples_are_in_the_canonical_layout(run, directory: Path) -> None:
    result = run("fmt", directory, "--check")
    assert (result.code, result.out) == (0, ""), result.out + result.err


def test_a_linked_file_is_rewritten_through_its_link(run, write, tmp_path: Path) -> None:
    directory = write({"real/pool.yaml": MESSY})
    config = tmp_path / "config"
    config.mkdir()
    (config / "pool.yaml").symlink_to(directory / "real" / "pool.yaml")
    assert run("fmt", config).code == 0
    assert (config / "pool.yaml").is_symlink()
    assert (directory / "real" / "pool.yaml").read_text() == CANONICAL


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_file_that_cannot_be_rewritten_is_an_error(run, write) -> None:
    directory = write({"pool.yaml": MESSY})
    directory.chmod(0o555)
    try:
        result = run("fmt", directory)
    finally:
        directory.chmod(0o755)
    assert result.code == 1
    assert "cannot be rewritten" in result.err
