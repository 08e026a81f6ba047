"""A job's subject as a newcomer or a script gets it wrong: empty in the job file, or longer
than any policy's subject may be (in the file, or through `--subject "$(...)"`). Each is bad
input: exit 1 naming the file, line and field (or the option), and nothing recorded. They used
to be recorded as rejected jobs, as the pool used to be before it was held to a name."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file, queue_digest, refused

LONG = "s" * 201  # a SubjectPolicy's subject is 1 to 200 characters


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return applied(tmp_path_factory.mktemp("subjects"))


@pytest.mark.parametrize(("subject", "field"), [('""', "subject"), (LONG, "subject")])
def test_a_subject_no_policy_could_have_is_a_located_error(
    pf: Pf, shared: Path, tmp_path: Path, subject: str, field: str
) -> None:
    job = job_file(tmp_path, f"kind: Job\nname: j\nsubject: {subject}\nrun: echo\n")
    before = queue_digest(shared)
    stderr = refused(pf("jobs", "submit", job, "--chdir", shared), f"{job}:3:", field)
    assert "rejected" not in stderr
    assert queue_digest(shared) == before


def test_a_subject_option_no_policy_could_have_is_refused(
    pf: Pf, shared: Path, tmp_path: Path
) -> None:
    job = job_file(tmp_path, "kind: Job\nname: j\nrun: echo\n")
    before = queue_digest(shared)
    stderr = refused(
        pf("jobs", "submit", job, "--subject", LONG, "--chdir", shared),
        "Invalid value for '--subject'",
        "at most 200 characters",
    )
    assert len(stderr) < 1000
    assert queue_digest(shared) == before
