"""`plan -out FILE` aimed at something that is not a plan: the configuration's own YAML file, a
user's notes, a link to one of them. The plan is not saved over it (exit 1, the file as it was);
an earlier plan file, an empty file or a new name are written as before, and a file or link
planted at the name a save used to write through first is never touched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest


@pytest.mark.parametrize("target", ["cluster.yaml", "../notes.txt", "../link-to-cluster"])
def test_plan_out_never_overwrites_what_is_not_a_plan(pf: Pf, quick: Path, target: str) -> None:
    (quick.parent / "notes.txt").write_text("my notes\n")
    (quick.parent / "link-to-cluster").symlink_to(quick / "cluster.yaml")
    before = tree_digest(quick.parent)
    saved = pf("--chdir", quick, "plan", "-out", target)
    assert saved.returncode == 1, saved.stdout
    # A configuration's own file is refused before it is looked at (test_plan_out16.py).
    why = "would be read as one of them" if target.endswith(".yaml") else "not a poolform plan"
    assert why in saved.stderr and "internal error" not in saved.stderr
    assert tree_digest(quick.parent) == before
    assert (quick.parent / "link-to-cluster").is_symlink()
    assert pf("validate", quick).returncode == 0


def test_an_earlier_plan_or_an_empty_file_is_replaced_and_applies(pf: Pf, quick: Path) -> None:
    plan = quick.parent / "plan.bin"
    assert pf("plan", quick, "-out", plan).returncode == 0
    first = json.loads(plan.read_text())
    (quick / "worker-pool.yaml").write_text(
        (quick / "worker-pool.yaml").read_text().replace("workers: 2", "workers: 3")
    )
    again = pf("plan", quick, "-out", plan)  # a re-plan replaces the earlier plan
    assert again.returncode == 0, again.stderr
    assert json.loads(plan.read_text())["checksum"] != first["checksum"]
    empty = quick.parent / "empty.bin"
    empty.write_bytes(b"")
    assert pf("plan", quick, "-out", empty).returncode == 0
    applied = pf("apply", empty)
    assert applied.returncode == 0, applied.stderr


def test_a_link_planted_at_the_old_temporary_name_is_not_written_through(
    pf: Pf, quick: Path
) -> None:
    victim = quick.parent / "victim.txt"
    victim.write_text("keep me\n")
    (quick.parent / "plan.bin.tmp").symlink_to(victim)
    saved = pf("plan", quick, "-out", quick.parent / "plan.bin")
    assert saved.returncode == 0, saved.stderr
    assert victim.read_text() == "keep me\n"
    assert pf("apply", quick.parent / "plan.bin").returncode == 0
