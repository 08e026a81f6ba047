"""A configuration directory that holds one file under two names.

A link beside its target (`b.yaml -> a.yaml`) or a hard link is one file under a second name.
`validate` and `plan` read it once per name, so everything it declared was "defined twice
(first in a.yaml)", naming two files where there is one, and nothing could be planned. It is
now read once, under its own name (the one that is not a link), with a warning that names
both; `fmt` lays it out once (test_fmt32b.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.adversarial.conftest import Pf

POOL = "kind: ResourcePool\nname: seats\ncapacity: {seat: 2}\n"


def test_a_link_beside_its_target_is_read_once_with_a_warning_naming_both(
    tmp_path: Path, pf: Pf
) -> None:
    (tmp_path / "a.yaml").write_text(POOL)
    (tmp_path / "b.yaml").symlink_to("a.yaml")

    run = pf("validate", tmp_path)

    assert run.returncode == 0, run.stdout + run.stderr
    assert "defined twice" not in run.stdout + run.stderr
    assert "valid (1 ResourcePool)" in run.stdout
    assert "`b.yaml` is a link to `a.yaml` in this directory: read once, as `a.yaml`" in (
        run.stderr
    )


def test_a_hard_link_is_read_once_and_a_plan_creates_its_pool_once(tmp_path: Path, pf: Pf) -> None:
    (tmp_path / "a.yaml").write_text(POOL)
    os.link(tmp_path / "a.yaml", tmp_path / "b.yaml")

    plan = pf("plan", "--json", tmp_path)

    assert plan.returncode == 0, plan.stdout + plan.stderr
    document = json.loads(plan.stdout)
    assert [c["address"] for c in document["changes"]] == ["resource_pool.seats"]
    assert any(
        "`b.yaml` is the same file as `a.yaml` (a hard link)" in str(w)
        for w in document["warnings"]
    )


def test_two_files_alike_in_content_are_still_two_files(tmp_path: Path, pf: Pf) -> None:
    # Same bytes, different files: a real duplicate, refused as before.
    (tmp_path / "a.yaml").write_text(POOL)
    (tmp_path / "b.yaml").write_text(POOL)

    run = pf("validate", tmp_path)

    assert run.returncode == 1
    assert "is defined twice (first in" in run.stdout + run.stderr
    assert "same-file" not in run.stdout + run.stderr
