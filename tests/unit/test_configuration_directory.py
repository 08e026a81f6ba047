"""A configuration is a directory; a directory that declares nothing says so; an entry that
should be a file and cannot be read is an error naming it, never skipped."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from reconciler.checks import load_configuration, load_file
from reconciler.errors import ConfigurationError, PoolformError
from reconciler.loading import NotAConfigurationDirectory, NothingDeclared

POOL = "kind: ResourcePool\nname: quota\ncapacity: {gpu: 4}\n"
JOB = "kind: Job\nname: train\nrun: python train.py\nresources: {gpu: 1}\n"


def test_a_file_is_not_a_configuration(tmp_path: Path) -> None:
    (tmp_path / "pool.yaml").write_text(POOL)
    with pytest.raises(NotAConfigurationDirectory) as refused:
        load_configuration(tmp_path / "pool.yaml")
    assert (
        refused.value.message
        == f"{tmp_path / 'pool.yaml'} is a file; a configuration is a directory"
    )
    assert isinstance(refused.value, PoolformError)


def test_one_file_given_on_its_own_is_read_by_load_file(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(JOB)
    (tmp_path / "other.yaml").write_text("this: [is not read\n")
    configuration = load_file(tmp_path / "job.yaml")
    assert [(d.kind, d.model.name) for d in configuration.documents] == [("Job", "train")]


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"empty.yaml": ""},
        {"markers.yaml": "---\n---\n"},
        {"comments.yml": "# soon\n\n  # later\n"},
        {"a.yaml": "", "b.yaml": "---\n...\n", "c.yml": "# x\n"},
    ],
    ids=["no-files", "empty-file", "only-markers", "only-comments", "all-of-them"],
)
def test_a_directory_that_declares_nothing_says_so_and_is_refused_when_asked(
    tmp_path: Path, files: dict[str, str]
) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    empty = load_configuration(tmp_path)
    assert empty.declares_nothing
    assert empty.documents == []
    with pytest.raises(NothingDeclared) as refused:
        load_configuration(tmp_path, refuse_empty=True)
    assert "declare nothing" in refused.value.message or "has no *.yaml" in refused.value.message
    assert refused.value.message.startswith("no configuration found: ")
    # Nothing is recorded when this is raised: never read as a wish to delete everything.
    assert "destroy" not in (refused.value.hint or "")


def test_a_directory_with_one_document_declares_something(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("")
    (tmp_path / "pool.yaml").write_text("---\n" + POOL)
    assert not load_configuration(tmp_path).declares_nothing


def _unreadable(tmp_path: Path) -> ConfigurationError:
    with pytest.raises(ConfigurationError) as refused:
        load_configuration(tmp_path)
    return refused.value


def test_every_unreadable_entry_is_named_together_with_the_other_errors(tmp_path: Path) -> None:
    (tmp_path / "pool.yaml").write_text("kind: ResourcePool\nname: Bad\ncapacity: {gpu: 4}\n")
    (tmp_path / "gone.yaml").symlink_to("nowhere.yaml")
    (tmp_path / "loop.yaml").symlink_to("loop.yaml")
    os.mkfifo(tmp_path / "pipe.yml")
    (tmp_path / "old.yaml").mkdir()
    (tmp_path / "notes.txt").write_text("not a configuration file")
    error = _unreadable(tmp_path)
    by_file = {Path(d.location.file).name: d for d in error.diagnostics if d.location}
    assert sorted(by_file) == ["gone.yaml", "loop.yaml", "old.yaml", "pipe.yml", "pool.yaml"]
    assert by_file["gone.yaml"].rule == "unreadable-file"
    assert "symbolic link to nowhere.yaml, which does not exist" in by_file["gone.yaml"].message
    assert "loops back on itself" in by_file["loop.yaml"].message
    assert "FIFO" in by_file["pipe.yml"].message
    assert "is a directory" in by_file["old.yaml"].message
    assert by_file["pool.yaml"].location.line == 2  # the model error is still reported


def test_a_file_that_cannot_be_opened_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pool.yaml").write_text(POOL)
    (tmp_path / "secret.yaml").write_text(POOL)
    real_open = os.open

    def deny(path: object, *args: object, **kwargs: object) -> int:
        if str(path).endswith("secret.yaml"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", deny)
    (diagnostic,) = _unreadable(tmp_path).diagnostics
    assert diagnostic.message.startswith("`secret.yaml` is not readable (permission denied)")


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_a_file_without_read_permission_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "secret.yaml").write_text(POOL)
    (tmp_path / "secret.yaml").chmod(0)
    (diagnostic,) = _unreadable(tmp_path).diagnostics
    assert "permission denied" in diagnostic.message


def test_a_name_that_is_not_utf8_is_an_error_shown_escaped(tmp_path: Path) -> None:
    (tmp_path / "pool.yaml").write_text(POOL)
    with open(os.path.join(os.fsencode(tmp_path), b"p\xffol.yaml"), "wb") as handle:
        handle.write(POOL.encode())
    (diagnostic,) = _unreadable(tmp_path).diagnostics
    assert diagnostic.rule == "file-name"
    assert diagnostic.location is not None
    assert diagnostic.location.file.endswith("p\\xffol.yaml")
    diagnostic.render().encode("utf-8")  # printable: no lone surrogate left to crash on


def test_editor_lock_links_are_not_configuration_files(tmp_path: Path) -> None:
    (tmp_path / "pool.yaml").write_text(POOL)
    (tmp_path / ".#pool.yaml").symlink_to("user@host.1234:1700000000")
    assert [d.model.name for d in load_configuration(tmp_path).documents] == ["quota"]
