"""The `empty-file` warning of a file that is only `~` (or `null` documents) said it "holds no
document (only comments or `---`)", which is false of what the user sees: it holds a null
document. It says what is so now: it declares nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf


@pytest.mark.parametrize("text", ["~\n", "null\n---\n~\n", "# nothing here\n---\n"])
def test_a_file_of_null_documents_is_named_as_declaring_nothing(
    pf: Pf, quick: Path, text: str
) -> None:
    (quick / "emptied.yaml").write_text(text)
    result = pf("validate", quick)
    assert result.returncode == 0, result.stderr
    assert (
        "emptied.yaml: warning: this file declares nothing (only comments, `---` or null "
        "documents such as `~`)"
    ) in result.stderr
    assert "holds no document" not in result.stderr
