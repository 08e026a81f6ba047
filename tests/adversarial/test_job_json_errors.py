"""`jobs list`, `jobs show` and `pools status` with `--json` print one JSON document on stdout,
also when they fail: the error document `plan --json` prints (reconciler/cli/error.schema.json),
so a script that parses their stdout reads the error instead of crashing on empty input.
Before, stdout was empty."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.scheduler_setup import applied
from tests.adversarial.test_json_errors8 import error_document
from tests.scenario.installed import poolform


def test_jobs_show_of_a_job_that_does_not_exist(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    document = error_document(
        poolform("jobs", "show", "999", "--json", "--chdir", directory), "jobs show"
    )
    assert "no job 999" in document["error"]["message"]


def test_pools_status_of_a_pool_never_applied(tmp_path: Path) -> None:
    directory = applied(tmp_path)
    result = poolform("pools", "status", "nope", "--json", "--chdir", directory)
    document = error_document(result, "pools status")
    assert "no pool named nope is applied" in document["error"]["message"]


def test_jobs_list_where_there_is_no_configuration(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    document = error_document(poolform("jobs", "list", "--json", "--chdir", empty), "jobs list")
    assert "holds no poolform configuration" in document["error"]["message"]
    assert not (empty / ".poolform").exists()  # and nothing made
