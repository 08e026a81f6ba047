"""A job file that is a symbolic link looping back on itself made `jobs submit` end with
"internal error: RuntimeError: Symlink loop" (finding the configuration near the job file
followed the link), and a dangling one said "no such file", hiding the link; `validate` of
either said "is not a directory". Now each names the link and what is wrong with it, exit 1,
nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.scheduler_setup import applied, queue_digest, refused
from tests.scenario.installed import poolform


def _loop(tmp_path: Path) -> Path:
    (tmp_path / "a.yaml").symlink_to("b.yaml")
    (tmp_path / "b.yaml").symlink_to("a.yaml")
    return tmp_path / "a.yaml"


def _dangling(tmp_path: Path) -> Path:
    (tmp_path / "a.yaml").symlink_to(tmp_path / "gone.yaml")
    return tmp_path / "a.yaml"


LINKS = {
    "loop": (_loop, "is a symbolic link that loops back on itself"),
    "dangling": (_dangling, "which does not exist"),
}


@pytest.mark.parametrize("kind", LINKS)
def test_jobs_submit_of_a_broken_link_names_it(tmp_path: Path, kind: str) -> None:
    directory = applied(tmp_path)
    make, why = LINKS[kind]
    links = directory / "jobs"  # in the configuration: found from the job file's place
    links.mkdir()
    job = make(links)
    before = queue_digest(directory)
    for where in (("--chdir", directory), ()):
        result = poolform("jobs", "submit", job, *where)
        refused(result, "a.yaml", why)
    assert queue_digest(directory) == before


@pytest.mark.parametrize("kind", LINKS)
def test_validate_of_a_broken_link_names_it(tmp_path: Path, kind: str) -> None:
    make, why = LINKS[kind]
    result = poolform("validate", make(tmp_path))
    refused(result, "a.yaml", why, "[unreadable-file]")
    assert "is not a directory" not in result.stderr


def test_jobs_submit_of_a_device_says_it_cannot_be_read(tmp_path: Path) -> None:
    """A job file is no configuration: the reason a file cannot be read no longer says "so the
    configuration cannot be read" of it."""
    directory = applied(tmp_path)
    result = poolform("jobs", "submit", "/dev/zero", "--chdir", directory)
    refused(result, "/dev/zero: error: `zero` is a device, not a file, so it cannot be read")
