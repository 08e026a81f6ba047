"""A job file (or a configuration file) of many documents with a problem in each, such as
20,000 copies of one Job (`duplicate-name` on each): locating each problem cut the whole file
into its documents again, so N problems took N^2 (minutes for that file: `jobs submit` looked
hung). The position index now cuts each file once. Counted, not timed: the `---` scan runs
once for the whole file, however many documents are located."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.loading import documents
from reconciler.loading.sources import SourceFile, SourceRef, read_source


def test_locating_every_document_cuts_the_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "jobs.yaml"
    path.write_text("kind: Job\nname: j\nrun: x\n---\n" * 300)
    source = read_source(path)
    assert isinstance(source, SourceFile)
    index = documents.PositionIndex([source])
    scans = 0
    real = documents._marker_offsets

    def counted(raw: bytes) -> list[int]:
        nonlocal scans
        scans += 1
        return real(raw)

    monkeypatch.setattr(documents, "_marker_offsets", counted)
    lines = [index.locate(SourceRef(source.display, i, ("name",))).line for i in range(300)]
    assert lines == [2 + 4 * i for i in range(300)]
    assert scans == 1
