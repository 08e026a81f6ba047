"""Recovering positions is bounded: the slow, positioned reader reads only the documents that
need it, never a whole large file because one document has a problem (nothing here is timed:
what is counted is how much text the positioned reader is given)."""

from __future__ import annotations

from pathlib import Path

import pytest

import reconciler.loading.yaml_positions as positions
from reconciler.checks import load_configuration
from reconciler.errors import ConfigurationError

DOCUMENTS = 2_000


@pytest.fixture
def positioned_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The length of every text handed to the positioned reader."""
    lengths: list[int] = []
    real = positions.parse_with_positions

    def counting(text: str, first_line: int = 1) -> list[positions.ParsedDocument]:
        lengths.append(len(text))
        return real(text, first_line)

    monkeypatch.setattr(positions, "parse_with_positions", counting)
    return lengths


def _pools(count: int, wrong: dict[int, str]) -> str:
    return "---\n".join(
        f"kind: ResourcePool\nname: pool-{i:05d}\ncapacity:\n  gpu: {wrong.get(i, '4')}\n"
        for i in range(count)
    )


def test_one_wrong_document_among_thousands_is_located_alone(
    tmp_path: Path, positioned_reads: list[int]
) -> None:
    text = _pools(DOCUMENTS, {1234: "lots"})
    (tmp_path / "pools.yaml").write_text(text)
    with pytest.raises(ConfigurationError) as refused:
        load_configuration(tmp_path)
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.location is not None
    assert (diagnostic.location.line, diagnostic.location.column) == (1234 * 5 + 4, 8)
    assert sum(positioned_reads) < 200  # one document, not the file's ~90,000 characters


def test_a_non_ascii_comment_does_not_send_the_file_to_the_slow_reader(
    tmp_path: Path, positioned_reads: list[int]
) -> None:
    (tmp_path / "pools.yaml").write_text("# équipe ML\n" + _pools(DOCUMENTS, {}))
    assert len(load_configuration(tmp_path).documents) == DOCUMENTS
    assert positioned_reads == []


def test_a_document_the_fast_reader_declines_is_read_slowly_alone(
    tmp_path: Path, positioned_reads: list[int]
) -> None:
    text = _pools(DOCUMENTS, {700: ".nan", 1500: "0o17"})
    (tmp_path / "pools.yaml").write_text(text)
    with pytest.raises(ConfigurationError) as refused:
        load_configuration(tmp_path)
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.location is not None
    assert diagnostic.location.line == 700 * 5 + 4
    assert len(positioned_reads) == 2  # the two documents, each on its own
    assert sum(positioned_reads) < 200


def test_a_syntax_error_is_located_in_its_document(
    tmp_path: Path, positioned_reads: list[int]
) -> None:
    text = _pools(DOCUMENTS, {900: "[4"})
    (tmp_path / "pools.yaml").write_text(text)
    with pytest.raises(ConfigurationError) as refused:
        load_configuration(tmp_path)
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.rule == "yaml-syntax"
    assert diagnostic.location is not None
    assert 900 * 5 + 4 <= diagnostic.location.line <= 900 * 5 + 5
    assert sum(positioned_reads) < 200


@pytest.mark.parametrize("separator", ["\r\n", "\n...\n"])
def test_files_that_cannot_be_cut_exactly_are_read_whole_and_still_right(
    tmp_path: Path, separator: str
) -> None:
    docs = _pools(3, {2: "lots"}).split("---\n")
    if separator == "\r\n":
        text = "---\n".join(docs).replace("\n", "\r\n")
    else:
        text = separator.join(docs[:2]) + "\n---\n" + docs[2]
    (tmp_path / "pools.yaml").write_bytes(text.encode())
    with pytest.raises(ConfigurationError) as refused:
        load_configuration(tmp_path)
    (diagnostic,) = refused.value.diagnostics
    assert diagnostic.location is not None
    assert "'lots' is not a quantity" in diagnostic.message


def test_lines_that_only_look_like_markers_do_not_cut_documents(tmp_path: Path) -> None:
    text = (
        "kind: WorkerPool\nname: w\npool: {workers: 1}\nsetup: |\n  echo start\n  ---\n"
        "  echo still the script\n---x: not a marker either\n"
    )
    (tmp_path / "pool.yaml").write_text(
        "kind: ResourcePool\nname: q\ncapacity: {gpu: .nan}\n---\n" + text
    )
    with pytest.raises(ConfigurationError) as refused:
        load_configuration(tmp_path)
    rules = sorted(
        (d.rule, d.location.line if d.location else 0) for d in refused.value.diagnostics
    )
    # the .nan, and `---x` read as a key of the worker pool's document (one document, not two)
    assert rules == [("invalid-value", 3), ("unknown-field", 12)]
