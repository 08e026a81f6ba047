"""`poolform fmt` and links that lead out of the directory it was given.

fmt writes a file in place, through a link (README: it keeps the inode). A pull request can add
`x.yaml -> ../../elsewhere/x.yaml`, or a link to a user's dotfile that happens to read as YAML;
`poolform fmt` run by a reviewer (or by CI) in the configuration's directory then rewrote that
file outside the repository. Now such a link is named by a warning and left alone (its target
is not read for layout nor written), with the rest laid out and the exit code what it would be
without it; a link whose target is inside the directory is laid out as before, and a link
swapped to lead outside between the read and the write is not written through either."""

from __future__ import annotations

from pathlib import Path

from reconciler.cli import fmt_writing
from tests.adversarial.conftest import Pf

LOOSE = "kind: ResourcePool\nname: x\ncapacity: {seat:   1}\n"
LAID_OUT = "kind: ResourcePool\nname: x\ncapacity: {seat: 1}\n"
DOTFILE = "theme:   dark\nkeys: [a,   b]\n"  # a user's file that reads as YAML


def repository(tmp_path: Path) -> tuple[Path, Path]:
    """(the configuration directory of a checked-out pull request, a file outside it)."""
    outside = tmp_path / "home" / ".config" / "tool.yaml"
    outside.parent.mkdir(parents=True)
    outside.write_text(DOTFILE)
    conf = tmp_path / "repo" / "conf"
    conf.mkdir(parents=True)
    (conf / "pools.yaml").write_text(LOOSE)
    (conf / "x.yaml").symlink_to("../../home/.config/tool.yaml")
    return conf, outside


def test_fmt_of_a_directory_never_writes_through_a_link_leading_outside_it(
    tmp_path: Path, pf: Pf
) -> None:
    conf, outside = repository(tmp_path)

    run = pf("fmt", conf)

    assert run.returncode == 0, run.stderr
    assert outside.read_text() == DOTFILE  # the user's file, as it was
    assert (conf / "pools.yaml").read_text() == LAID_OUT  # the rest is laid out
    assert run.stdout.split() == [str(conf / "pools.yaml")]
    assert "x.yaml: warning: `x.yaml` is a link to ../../home/.config/tool.yaml" in run.stderr
    assert "[link-outside]" in run.stderr and "Traceback" not in run.stderr


def test_fmt_of_a_link_given_by_name_never_writes_outside_its_directory(
    tmp_path: Path, pf: Pf
) -> None:
    conf, outside = repository(tmp_path)

    run = pf("fmt", conf / "x.yaml")

    assert run.returncode == 0, run.stderr
    assert outside.read_text() == DOTFILE
    assert "[link-outside]" in run.stderr


def test_fmt_check_names_a_link_leading_outside_and_does_not_count_it(
    tmp_path: Path, pf: Pf
) -> None:
    conf, outside = repository(tmp_path)
    (conf / "pools.yaml").write_text(LAID_OUT)

    run = pf("fmt", "--check", conf)

    assert run.returncode == 0, run.stdout + run.stderr  # nothing of the directory's changes
    assert "[link-outside]" in run.stderr
    assert outside.read_text() == DOTFILE


def test_fmt_still_lays_out_a_link_to_a_file_inside_the_directory_keeping_its_inode(
    tmp_path: Path, pf: Pf
) -> None:
    conf = tmp_path / "conf"
    (conf / "shared").mkdir(parents=True)
    target = conf / "shared" / "pools.yaml"
    target.write_text(LOOSE)
    inode = target.stat().st_ino
    (conf / "pools.yaml").symlink_to("shared/pools.yaml")

    run = pf("fmt", conf)

    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert target.read_text() == LAID_OUT and target.stat().st_ino == inode
    assert (conf / "pools.yaml").is_symlink()


def test_a_link_swapped_to_lead_outside_after_it_was_read_is_not_written_through(
    tmp_path: Path,
) -> None:
    conf, outside = repository(tmp_path)
    inside = conf / "pools.yaml"
    link = conf / "y.yaml"  # read as a link to pools.yaml; now it leads outside
    link.symlink_to(outside)
    outside.write_text(LOOSE)

    try:
        fmt_writing.rewrite_in_place(link, LAID_OUT, LOOSE.encode(), within=conf)
    except fmt_writing.ChangedMeanwhile:
        pass
    else:
        raise AssertionError("wrote through a link leading outside the directory")
    assert outside.read_text() == LOOSE and inside.read_text() == LOOSE
