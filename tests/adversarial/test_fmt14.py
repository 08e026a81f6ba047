"""`poolform fmt` met by an attacker. `--recursive` entered no link to a directory (it could
lead outside, or loop) but took links to files below: `sub/x.yaml -> ../../elsewhere/x.yaml`
rewrote a file outside the tree given (fmt writes through a link), and a link to a file inside
it laid that file out twice. Below the directory given, links to files are skipped too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.adversarial.conftest import Pf

LOOSE = "kind: ResourcePool\nname: {name}\ncapacity:\n    gpu: 4\n"
LAID_OUT = "kind: ResourcePool\nname: {name}\ncapacity:\n  gpu: 4\n"


def test_recursive_leaves_a_file_outside_the_tree_alone(pf: Pf, tmp_path: Path) -> None:
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    (tree / "sub").mkdir(parents=True)
    outside.mkdir()
    (outside / "x.yaml").write_text(LOOSE.format(name="x"))
    (tree / "sub" / "x.yaml").symlink_to(outside / "x.yaml")
    (tree / "sub" / "own.yaml").write_text(LOOSE.format(name="own"))
    (tree / "sub" / "deeper").mkdir()
    (tree / "sub" / "deeper" / "loop").symlink_to(tree, target_is_directory=True)

    check = pf("fmt", "--check", "--recursive", tree)
    assert check.returncode == 3, check.stderr
    assert check.stdout.split() == [str(tree / "sub" / "own.yaml")]
    result = pf("fmt", "--recursive", tree)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(tree / "sub" / "own.yaml")]
    assert (outside / "x.yaml").read_text() == LOOSE.format(name="x")
    assert (tree / "sub" / "own.yaml").read_text() == LAID_OUT.format(name="own")


def test_recursive_lays_out_a_file_linked_twice_once(pf: Pf, tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "pool.yaml").write_text(LOOSE.format(name="p"))
    (tmp_path / "b" / "pool.yaml").symlink_to(Path("..") / "a" / "pool.yaml")
    result = pf("fmt", "--check", "--recursive", tmp_path)
    assert result.returncode == 3
    assert result.stdout.split() == [str(tmp_path / "a" / "pool.yaml")]


def test_a_link_in_the_directory_given_to_a_shared_file_is_laid_out_where_it_lives(
    pf: Pf, tmp_path: Path
) -> None:
    """`fmt DIR` reads what validate reads, but writes nothing outside DIR: a link there to a
    file elsewhere (a file shared by environments) is named and left, and laid out by `fmt` of
    its own directory, or of a directory above both (test_fmt_links29.py: such a link in a
    pull request rewrote a file outside the repository)."""
    (tmp_path / "shared").mkdir()
    (tmp_path / "env").mkdir()
    (tmp_path / "shared" / "pool.yaml").write_text(LOOSE.format(name="p"))
    (tmp_path / "env" / "pool.yaml").symlink_to(tmp_path / "shared" / "pool.yaml")
    result = pf("fmt", "--recursive", tmp_path / "env")
    assert result.returncode == 0, result.stderr
    assert "[link-outside]" in result.stderr
    assert (tmp_path / "shared" / "pool.yaml").read_text() == LOOSE.format(name="p")
    assert pf("fmt", "--recursive", tmp_path).returncode == 0
    assert (tmp_path / "shared" / "pool.yaml").read_text() == LAID_OUT.format(name="p")
    assert (tmp_path / "env" / "pool.yaml").is_symlink()


NULL_ENTRY = "kind: Job\nname: j\nrun: |\n  - kept as written \nargs:\n    -\n    - x\n"


def test_a_null_entry_gets_no_trailing_blank(pf: Pf, tmp_path: Path) -> None:
    """A sequence entry written as a bare `-` (null) was laid out as `- ` with a trailing
    blank: pre-commit's trailing-whitespace hook strips it, and `fmt --check` then failed
    again, for ever. A block scalar's own trailing blank is its text and stays."""
    path = tmp_path / "job.yaml"
    path.write_text(NULL_ENTRY)
    assert pf("fmt", tmp_path).returncode == 0
    laid_out = path.read_text()
    assert laid_out == "kind: Job\nname: j\nrun: |\n  - kept as written \nargs:\n  -\n  - x\n"
    assert pf("fmt", "--check", tmp_path).returncode == 0


def test_a_file_saved_while_fmt_runs_is_left_as_saved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """fmt reads every file, lays them out, then writes: an editor's save in between was
    overwritten with the laid-out old text, the edit lost. Now the file is looked at last and,
    changed, left as it is (exit 1, naming it)."""
    from reconciler.cli.main import main
    from reconciler.usecases import formatting

    path = tmp_path / "pool.yaml"
    path.write_text(LOOSE.format(name="old"))
    saved = LOOSE.format(name="saved-meanwhile")
    real = formatting.format_sources

    def format_then_save(sources: list[Any]) -> formatting.Formatting:
        result = real(sources)
        path.write_text(saved)  # the editor's save, after fmt read the file
        return result

    monkeypatch.setattr(formatting, "format_sources", format_then_save)
    assert main(["fmt", str(tmp_path)]) == 1
    assert "pool.yaml: error: changed while fmt ran; left as it is now" in capsys.readouterr().err
    assert path.read_text() == saved
    assert [p.name for p in tmp_path.iterdir()] == ["pool.yaml"]  # no temporary file left


def test_two_links_to_one_file_in_the_directory_given(pf: Pf, tmp_path: Path) -> None:
    (tmp_path / "pool.yaml").write_text(LOOSE.format(name="p"))
    (tmp_path / "also.yaml").symlink_to("pool.yaml")
    result = pf("fmt", tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "pool.yaml").read_text() == LAID_OUT.format(name="p")


CLUSTER_API = (
    "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata:\n    name: c\n---\n"
    "apiVersion: cluster.x-k8s.io/v1beta1\nkind: MachinePool\nmetadata:\n    name: mp\n"
)
KIND_CONFIG = "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n    - role: x\n"


def test_recursive_leaves_kubernetes_manifests_alone(pf: Pf, tmp_path: Path) -> None:
    """Cluster API's `kind: Cluster` / `kind: MachinePool` and kind's cluster config share
    poolform's kind names: `fmt --recursive` laid them out (and `--check` failed CI on them),
    though the README says a repository's other YAML is never touched."""
    (tmp_path / "capi").mkdir()
    (tmp_path / "capi" / "cluster.yaml").write_text(CLUSTER_API)
    (tmp_path / "kind").mkdir()
    (tmp_path / "kind" / "config.yaml").write_text(KIND_CONFIG)
    (tmp_path / "pools").mkdir()
    (tmp_path / "pools" / "p.yaml").write_text(LOOSE.format(name="p"))
    result = pf("fmt", "--recursive", tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [str(tmp_path / "pools" / "p.yaml")]
    assert (tmp_path / "capi" / "cluster.yaml").read_text() == CLUSTER_API
    assert (tmp_path / "kind" / "config.yaml").read_text() == KIND_CONFIG


def test_recursive_through_a_tree_1100_directories_deep(pf: Pf, tmp_path: Path) -> None:
    """os.walk recurses once per level (Python 3.11): `internal error: RecursionError`."""
    deepest = tmp_path
    for _ in range(1100):
        deepest = deepest / "d"
        deepest.mkdir()
    (deepest / "p.yaml").write_text(LOOSE.format(name="deep"))
    try:
        result = pf("fmt", "--recursive", tmp_path)
        assert result.returncode == 0, result.stderr[-300:]
        assert (deepest / "p.yaml").read_text() == LAID_OUT.format(name="deep")
    finally:  # removed here, bottom up: pytest's own clean-up recurses per level too
        (deepest / "p.yaml").unlink()
        while deepest != tmp_path:
            deepest.rmdir()
            deepest = deepest.parent


def test_a_line_longer_than_64_kib_is_not_wrapped(pf: Pf, tmp_path: Path) -> None:
    """The layout promises no line wrapping, but ruamel's width was 65,536: a longer plain
    string (a setup one-liner, a long description) was cut into two lines."""
    path = tmp_path / "pool.yaml"
    text = "kind: ResourcePool\nname: a\ndescription: " + "word " * 20000 + "end\n"
    path.write_text(text)
    result = pf("fmt", "--check", tmp_path)
    assert result.returncode == 0, result.stdout[:300]
    assert path.read_text() == text


BLANK_AFTER_MARKER = (
    "kind: ResourcePool\nname: a\ncapacity:\n  gpu: 4\n---\n\n\n"
    "kind: ResourcePool\nname: b\ncapacity:\n  gpu: 4\n"
)


def test_a_second_fmt_changes_nothing_after_blank_lines_below_a_marker(
    pf: Pf, tmp_path: Path
) -> None:
    """Blank lines right after `---` lost one per run: `fmt` then `fmt --check` (a hook, then
    CI) failed, and so on once per blank line. `---   # comment` (spaces before the comment)
    had its comment moved below it, indented."""
    path = tmp_path / "pools.yaml"
    path.write_text(BLANK_AFTER_MARKER.replace("---\n", "---   # the second pool\n"))
    assert pf("fmt", tmp_path).returncode == 0
    assert pf("fmt", "--check", tmp_path).returncode == 0
    assert path.read_text() == (
        "kind: ResourcePool\nname: a\ncapacity:\n  gpu: 4\n---   # the second pool\n"
        "kind: ResourcePool\nname: b\ncapacity:\n  gpu: 4\n"
    )
