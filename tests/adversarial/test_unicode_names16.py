"""Names that differ only by Unicode: resource names are ASCII (pinned here: case, fullwidth
letters, the Turkish dotted I are refused), but a policy's subject is free text. Two policies on
one pool for `team/café` written once with `é` and once with `e` and a combining accent (NFC
and NFD; macOS and some editors write the second) were both valid: they print the same in
validate, plan and show, yet are two subjects, and a job names only one. Now they are one
subject's two policies (`duplicate-policy`), saying why they look alike."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

POOL = "kind: ResourcePool\nname: p\ncapacity: {gpu: 4}\n"


def policy(name: str, subject: str) -> str:
    return f"---\nkind: SubjectPolicy\nname: {name}\nsubject: {subject}\npool: p\npriority: 1\n"


def test_subjects_differing_only_by_normalisation_are_one_subject(pf: Pf, tmp_path: Path) -> None:
    composed = "team/caf\u00e9"
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    (tmp_path / "c.yaml").write_text(POOL + policy("a", composed) + policy("b", decomposed))

    result = pf("validate", tmp_path)

    assert result.returncode == 1
    assert "c.yaml:13:10: error: subject `team/caf" in result.stderr, result.stderr
    assert "already has a policy on pool `p` (`a`)" in result.stderr
    assert "differ only in how their Unicode characters are encoded" in result.stderr
    assert "[duplicate-policy]" in result.stderr
    assert not (tmp_path / ".poolform").exists()


def test_distinct_subjects_stay_distinct(pf: Pf, tmp_path: Path) -> None:
    (tmp_path / "c.yaml").write_text(POOL + policy("a", "team/café") + policy("b", "team/Café"))
    assert pf("validate", tmp_path).returncode == 0


@pytest.mark.parametrize("name", ["Team", "\uff54\uff45\uff41\uff4d", "İ", "caf\u00e9"])
def test_resource_names_are_ascii(pf: Pf, tmp_path: Path, name: str) -> None:
    (tmp_path / "c.yaml").write_text(POOL.replace("name: p", f"name: {name}"))
    result = pf("validate", tmp_path)
    assert result.returncode == 1
    assert "c.yaml:2:7: error: name: the value" in result.stderr
