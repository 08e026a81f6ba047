"""A job's `resources.instance_type` is a cloud's type name, one word of printable ASCII. An
empty one, one with a space, a line break or an escape character was taken as asked: matched
against no pool's type, the job was recorded and rejected ("closest: pool w: instance type  asked,
its workers are c5.xlarge", the name printed as `\\n`). Now the job file is refused at the field,
with exit 1, and nothing is recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.scheduler_setup import applied, job_file, listed, refused
from tests.scenario.installed import poolform

JOB = "kind: Job\nname: odd\npool: w\nresources:\n  instance_type: {value}\nrun: 'true'\n"


@pytest.mark.parametrize(
    "value",
    ['""', '" c5.xlarge"', '"c5.xlarge\\nerror: forged"', '"c5\\e[31mred"', '"c5.xlarge "'],
)
def test_submit_refuses_an_instance_type_that_is_not_one_word(tmp_path: Path, value: str) -> None:
    directory = applied(tmp_path)
    path = job_file(tmp_path, JOB.format(value=value))
    stderr = refused(poolform("jobs", "submit", path, "--chdir", directory))
    assert f"{path}:5:18: error: resources.instance_type: " in stderr
    assert "is not an instance type: one word of printable ASCII" in stderr
    assert listed(directory) == []  # nothing recorded


def test_a_type_the_pool_does_not_have_is_still_a_rejection_naming_both(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    path = job_file(tmp_path, JOB.format(value="C5.XLARGE"))
    refused(
        poolform("jobs", "submit", path, "--chdir", directory),
        "instance type C5.XLARGE asked, its workers are c5.xlarge",
    )
