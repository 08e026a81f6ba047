"""Hostile values in a job file: each is refused at submit with its file, line and field, exit
1, nothing recorded. One message was wrong: a negative accelerator count (`{H100: -1}`) was
refused as not "a whole number", which -1 is; it now says what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.scheduler_setup import applied, job_file, queue_digest, refused
from tests.scenario.installed import poolform

HEAD = "kind: Job\nname: j\npool: seats\n"
HOSTILE = {
    "negative accelerators": (
        "resources: {accelerators: {H100: -1}}\nrun: 'true'\n",
        "4:27: error: resources.accelerators: accelerator count for 'H100' must be a whole "
        "number, 0 or more",
    ),
    "fractional accelerators": (
        "resources: {accelerators: {H100: 1.5}}\nrun: 'true'\n",
        "must be a whole number, 0 or more",
    ),
    "NaN": ("resources: {custom: {seat: .nan}}\nrun: 'true'\n", "4:28: error: resources."),
    "negative": ("resources: {custom: {seat: -1}}\nrun: 'true'\n", "cannot be negative"),
    "huge": ("resources: {gpu: 1e300}\nrun: 'true'\n", "larger than any real capacity"),
    "billion laughs": ("envs: {A: &a x, B: *a}\nrun: 'true'\n", "[yaml-alias]"),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_job_file_is_refused_naming_its_place(tmp_path: Path, case: str) -> None:
    directory = applied(tmp_path)
    body, expected = HOSTILE[case]
    job = job_file(tmp_path, HEAD + body)
    before = queue_digest(directory)
    refused(poolform("jobs", "submit", job, "--chdir", directory), f"{job}:", expected)
    assert queue_digest(directory) == before
