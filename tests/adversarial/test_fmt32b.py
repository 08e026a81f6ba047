"""`poolform fmt DIR` and a file that DIR holds under two names.

A link beside its target (`b.yaml -> a.yaml`), a link at the top to a file `--recursive` also
reaches below, or a hard link, is one file under two names. fmt laid it out once per name:
`fmt` and `fmt --check` listed it twice and `--diff` showed the one change twice, so a
reviewer (or a CI step counting the files) saw two changes where there is one. Each file is
now laid out, listed and diffed once, under its own name (the one that is not a link)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.adversarial.conftest import Pf

LOOSE = "kind: ResourcePool\nname: x\ncapacity: {seat:   1}\n"
LAID_OUT = "kind: ResourcePool\nname: x\ncapacity: {seat: 1}\n"


def test_fmt_lists_a_file_reached_through_a_link_beside_it_once_under_its_own_name(
    tmp_path: Path, pf: Pf
) -> None:
    (tmp_path / "a.yaml").write_text(LOOSE)
    (tmp_path / "b.yaml").symlink_to("a.yaml")

    run = pf("fmt", tmp_path)

    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [str(tmp_path / "a.yaml")]
    assert (tmp_path / "a.yaml").read_text() == LAID_OUT
    assert (tmp_path / "b.yaml").is_symlink()


def test_fmt_check_and_diff_show_a_linked_files_one_change_once(tmp_path: Path, pf: Pf) -> None:
    (tmp_path / "a.yaml").write_text(LOOSE)
    (tmp_path / "b.yaml").symlink_to("a.yaml")

    check = pf("fmt", "--check", tmp_path)
    diff = pf("fmt", "--check", "--diff", tmp_path)

    assert check.returncode == 3 and check.stdout.splitlines() == [str(tmp_path / "a.yaml")]
    assert diff.returncode == 3 and diff.stdout.count("+++ new/") == 1, diff.stdout
    assert (tmp_path / "a.yaml").read_text() == LOOSE  # --check writes nothing


def test_fmt_recursive_lays_out_a_file_linked_from_above_once_under_its_own_name(
    tmp_path: Path, pf: Pf
) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "pools.yaml").write_text(LOOSE)
    (tmp_path / "pools.yaml").symlink_to("shared/pools.yaml")

    run = pf("fmt", "--check", "--recursive", tmp_path)

    assert run.returncode == 3, run.stderr
    assert run.stdout.splitlines() == [str(tmp_path / "shared" / "pools.yaml")]


def test_fmt_lists_a_file_with_two_hard_links_once(tmp_path: Path, pf: Pf) -> None:
    (tmp_path / "a.yaml").write_text(LOOSE)
    os.link(tmp_path / "a.yaml", tmp_path / "b.yaml")

    run = pf("fmt", tmp_path)

    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [str(tmp_path / "a.yaml")]
    assert (tmp_path / "b.yaml").read_text() == LAID_OUT
