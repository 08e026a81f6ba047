"""`poolform schema --out DIR` given a file, or a path it cannot write (through a file, on a
read-only or missing mount), stopped with "internal error: FileExistsError ...". Now it is one
error naming the path, exit 1, and the file given is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf

CASES = {
    "a file": ("cluster.yaml", "is not a directory"),
    "a path through a file": ("cluster.yaml/schemas", "cannot write the schemas to"),
}


@pytest.mark.parametrize("out, expected", CASES.values(), ids=CASES.keys())
def test_schema_out_where_it_cannot_write_is_one_clear_error(
    pf: Pf, quick: Path, out: str, expected: str
) -> None:
    before = (quick / "cluster.yaml").read_bytes()
    result = pf("schema", "--out", quick / out)
    assert result.returncode == 1, result.stdout
    assert expected in result.stderr and str(quick / out) in result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert (quick / "cluster.yaml").read_bytes() == before
