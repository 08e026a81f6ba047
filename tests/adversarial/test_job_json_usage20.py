"""`jobs show "$ID" --json` with an id that is no number (an empty variable, a name), `jobs
list --status` of no status, `jobs submit --num-jobs 0`, a missing job file, an option
misspelt: click refused the command line before the command ran, and stdout was empty while
every other error of these commands prints the error document (test_job_json_errors): a
script parsing stdout crashed on empty input. With `--json` on the command line, stdout now
holds the error document (reconciler/cli/error.schema.json), and stderr the usage as before;
without it, nothing changes."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tests.adversarial.scheduler_setup import applied, job_file, queue_digest
from tests.adversarial.test_json_errors8 import ERROR_SCHEMA
from tests.scenario.installed import poolform

REFUSED = {
    "an id that is no number": (("jobs", "show", "abc"), "'abc' is not a valid integer"),
    "an empty id": (("jobs", "show", ""), "'' is not a valid integer"),
    "id 0": (("jobs", "show", "0"), "0 is not in the range"),
    "an id past 64 bits": (("jobs", "show", str(2**64)), "is not in the range"),
    "two ids": (("jobs", "show", "1", "2"), "unexpected extra argument (2)"),
    "no status": (("jobs", "list", "--status", "bogus"), "'bogus' is not one of"),
    "a misspelt option": (("jobs", "list", "--statsu", "queued"), "No such option"),
    "no job file": (("jobs", "submit"), "Missing argument 'JOB_FILE'"),
    "zero ranks": (("jobs", "submit", "JOB", "--num-jobs", "0"), "0 is not in the range"),
    "a priority of NaN": (("jobs", "submit", "JOB", "--priority", "nan"), "'nan' is not"),
    "two pools": (("pools", "status", "a", "b"), "unexpected extra argument (b)"),
}


@pytest.mark.parametrize(("args", "said"), REFUSED.values(), ids=REFUSED.keys())
def test_a_refused_command_line_with_json_prints_the_error_document(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: 'true'\n")
    args = tuple(str(job) if arg == "JOB" else arg for arg in args)
    before = queue_digest(directory)

    result = poolform(*args, "--json", "--chdir", directory)

    assert result.returncode == 1, (result.stdout, result.stderr)
    document = json.loads(result.stdout)
    jsonschema.validate(document, ERROR_SCHEMA)
    assert document["operation"] == " ".join(args[:2])
    assert document["error"]["exit_code"] == 1
    message = document["error"]["message"]
    assert said in message and message.removeprefix("error: ") in result.stderr
    assert "Usage: poolform" in result.stderr  # the usage line that helps, as before
    assert queue_digest(directory) == before


def test_without_json_a_refused_command_line_prints_nothing_on_stdout(tmp_path: Path) -> None:
    directory = applied(tmp_path)

    result = poolform("jobs", "show", "abc", "--chdir", directory)

    assert (result.returncode, result.stdout) == (1, "")
    assert "'abc' is not a valid integer" in result.stderr


def test_a_terraform_spelt_json_counts(tmp_path: Path) -> None:
    directory = applied(tmp_path)

    result = poolform("jobs", "show", "abc", "-json", "--chdir", directory)

    assert result.returncode == 1
    assert json.loads(result.stdout)["operation"] == "jobs show"
