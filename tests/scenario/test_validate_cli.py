"""`poolform validate`, `schema` and `--help` as a user meets them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from ruamel.yaml import YAML

from tests.conftest import EXAMPLES, ROOT

CONFIG_DIRS = sorted(
    p for p in EXAMPLES.iterdir() if p.is_dir() and p.name != "ci"
)  # ci: a workflow
# Not what a reader's own runs of the examples left in place under `.poolform/` (its jobs).
JOB_DIRS = sorted(p for p in EXAMPLES.rglob("jobs") if p.is_dir() and ".poolform" not in p.parts)
EXAMPLE_FILES = sorted(p for p in EXAMPLES.rglob("*.yaml") if ".poolform" not in p.parts)


@pytest.mark.parametrize(
    "directory", CONFIG_DIRS + JOB_DIRS, ids=lambda p: str(p.relative_to(EXAMPLES))
)
def test_every_example_is_valid(run, directory: Path) -> None:
    result = run("validate", directory)
    assert result.code == 0, result.err
    assert "valid (" in result.out


def test_errors_are_reported_together_sorted_with_locations_and_hints(run, write) -> None:
    directory = write(
        {
            "b.yaml": "kind: ResourcePool\nname: datacenter\ncapacity: {gpu: 10}\n",
            "a.yaml": (
                "kind: SubjectPolicy\nname: prod\nsubject: prod-stack\npool: datacentr\n"
                "---\nkind: MachinePool\nname: demo\nmachine_types:\n  - machine_type: a\n"
                "    launch_templates: [{instance_type: m5.large}]\n"
                "    partitons: [{name: any, size: 2}]\n"
            ),
        }
    )
    result = run("validate", directory)
    assert result.code == 1
    lines = [line for line in result.err.splitlines() if ": error: " in line]
    assert lines[0].startswith(
        f"{directory}/a.yaml:4:7: error: ResourcePool `datacentr` is not defined"
    )
    assert "did you mean `datacenter`?" in result.err
    assert any(
        line.startswith(f"{directory}/a.yaml:11:5: error: unknown field `partitons`")
        for line in lines
    )
    assert "did you mean `partitions`?" in result.err
    assert "Traceback" not in result.err


def test_bad_input_changes_nothing(run, write) -> None:
    directory = write({"pool.yaml": "kind: ResourcePool\nname: x\ncapacity: {gpu: lots}\n"})
    before = sorted(p.name for p in directory.iterdir())
    assert run("validate", directory).code == 1
    assert sorted(p.name for p in directory.iterdir()) == before


def test_warnings_do_not_fail_validation(run, write) -> None:
    directory = write(
        {
            "pool.yaml": (
                "kind: MachinePool\nname: big\nmachine_types:\n  - machine_type: h200\n"
                "    launch_templates: [{instance_type: p5e.48xlarge}]\n"
                "    partitions: [{name: any, size: 50}]\n"
            )
        }
    )
    result = run("validate", directory)
    assert result.code == 0
    assert "warning: machine type `h200` may grow to 50 p5e.48xlarge" in result.err


def test_a_partition_without_rules_gets_the_catch_all_rule(write) -> None:
    from reconciler.checks import load_configuration
    from schemas import MachinePool

    directory = write(
        {
            "pool.yaml": (
                "kind: MachinePool\nname: p\nmachine_types:\n  - machine_type: cpu\n"
                "    launch_templates: [{instance_type: m5.large}]\n"
                "    partitions: [{name: any, size: 2}]\n"
            )
        }
    )
    (pool,) = load_configuration(directory).of_kind(MachinePool)
    rules = pool.machine_types[0].partitions[0].rules
    assert [(r.priority, r.selector) for r in rules] == [(1, {})]


def test_committed_json_schemas_match_the_models(run, tmp_path: Path) -> None:
    assert run("schema", "--out", tmp_path).code == 0
    for generated in sorted(tmp_path.glob("*.json")):
        committed = ROOT / "schemas" / "json" / generated.name
        assert committed.exists(), (
            f"run `poolform schema --out schemas/json` ({generated.name} missing)"
        )
        assert json.loads(committed.read_text()) == json.loads(generated.read_text()), (
            f"schemas/json/{generated.name} is stale: run `poolform schema --out schemas/json`"
        )


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_every_example_names_its_schema_and_satisfies_it(path: Path) -> None:
    first = path.read_text().splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema="), "examples carry a schema modeline"
    schema_path = (path.parent / first.split("$schema=", 1)[1].strip()).resolve()
    assert schema_path.exists(), schema_path
    for document in YAML(typ="safe", pure=True).load_all(path.read_text()):
        if document is None:
            continue
        kind = {"ANYSCALE_MANAGED": "MachinePool"}.get(document["kind"], document["kind"])
        schema = json.loads((ROOT / "schemas" / "json" / f"{kind}.json").read_text())
        jsonschema.validate(document, schema)


def test_help_does_not_import_cloud_sdks() -> None:
    code = (
        "import sys\nfrom reconciler.cli.main import main\n"
        "assert main(['--help']) == 0\n"
        "assert main(['validate', sys.argv[1]]) == 0\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('boto3', 'botocore', 'networkx', 'deepdiff')"
        " or m.startswith('google.cloud')]\n"
        "print(heavy)\nsys.exit(1 if heavy else 0)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(EXAMPLES / "quickstart")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_usage_errors_exit_1_not_2(run) -> None:
    result = run("validate", "--no-such-flag")
    assert result.code == 1
    assert "No such option" in result.err


def test_a_missing_directory_is_one_clear_error(run, tmp_path: Path) -> None:
    result = run("validate", tmp_path / "nope")
    assert result.code == 1
    assert result.err.strip() == f"error: {tmp_path / 'nope'} does not exist"


def test_plan_of_one_file_is_refused_and_touches_nothing(run, quickstart: Path) -> None:
    one_file = quickstart / "machine-pool.yaml"
    before = sorted(p.name for p in quickstart.iterdir())
    result = run("plan", one_file)
    assert result.code == 1
    assert f"takes a configuration directory, not a file: {one_file}" in result.err
    assert sorted(p.name for p in quickstart.iterdir()) == before


def test_validate_still_checks_one_file_on_its_own(run) -> None:
    job = next(EXAMPLES.rglob("jobs/*.yaml"))
    result = run("validate", job)
    assert result.code == 0, result.err
    assert "valid (" in result.out


@pytest.mark.parametrize("files", [{"a.yaml": ""}, {"a.yaml": "---\n", "b.yml": "# soon\n"}])
def test_plan_of_a_directory_that_declares_nothing_is_refused_but_destroy_may(
    run, write, files: dict[str, str]
) -> None:
    directory = write(files)
    refused = run("plan", directory, "--no-refresh")
    assert refused.code == 1
    assert "declare nothing" in refused.err
    # nothing is recorded: the hint is where to look, never destroy (test_empty_directory28.py)
    assert "destroy" not in refused.err
    assert run("plan", directory, "--destroy", "--no-refresh").code == 0


FORGING_KEY = '"x\\n/etc/passwd:1:1: error: forged [rule]\\e[2J\\u202e::error::forged": 1\n'


def test_validate_json_prints_every_diagnostic_as_an_object(run, write) -> None:
    directory = write(
        {
            "pool.yaml": "kind: ResourcePool\nname: q\ncapacity: {gpu: lots}\n---\n"
            "kind: MachinePool\nname: big\nmachine_types:\n  - machine_type: h200\n"
            "    launch_templates: [{instance_type: p5e.48xlarge}]\n"
            "    partitions: [{name: any, size: 50}]\n"
        }
    )
    result = run("validate", directory, "--json")
    assert result.code == 1
    document = json.loads(result.out)
    assert (document["valid"], document["error_count"], document["warning_count"]) == (
        False,
        1,
        1,
    )
    error, warning = document["diagnostics"]
    assert error == {
        "file": str(directory / "pool.yaml"),
        "line": 3,
        "column": 17,
        "severity": "error",
        "rule": "invalid-value",
        "message": error["message"],
        "suggestion": None,
    }
    assert "'lots' is not a quantity" in error["message"]
    assert (warning["severity"], warning["rule"]) == ("warning", "above-typical-quota")


def test_validate_json_of_a_valid_configuration_and_of_a_missing_one(run, tmp_path: Path) -> None:
    valid = run("validate", "--json", EXAMPLES / "quickstart")
    assert valid.code == 0
    assert json.loads(valid.out)["valid"] is True
    missing = run("validate", "--format", "json", tmp_path / "nope")
    assert missing.code == 1
    (diagnostic,) = json.loads(missing.out)["diagnostics"]
    assert diagnostic["message"] == f"{tmp_path / 'nope'} does not exist"


def test_validate_format_github_prints_escaped_annotations(run, write) -> None:
    directory = write(
        {"pool.yaml": "kind: ResourcePool\nname: q\ncapacity:\n  gpu: 4\n" + FORGING_KEY}
    )
    result = run("validate", directory, "--format", "github")
    assert result.code == 1
    (line,) = result.out.splitlines()
    prefix = f"::error file={directory / 'pool.yaml'},line=5,col=1,title=unknown-field::"
    forged = "x\\n/etc/passwd:1:1: error: forged [rule]\\x1b[2J\\u202e::error::forged"
    assert line == f"{prefix}unknown field `{forged}` in ResourcePool"
    assert "\x1b" not in result.out


@pytest.mark.parametrize("output", ["text", "json", "github"])
def test_user_text_cannot_forge_a_line_of_output(run, write, output: str) -> None:
    directory = write(
        {"pool.yaml": "kind: ResourcePool\nname: q\ncapacity:\n  gpu: 4\n" + FORGING_KEY}
    )
    result = run("validate", directory, "--format", output)
    shown = result.out + result.err
    assert "\x1b" not in shown and "\u202e" not in shown
    lines = [line for line in shown.splitlines() if "forged" in line]
    assert len(lines) == 1 or output == "json"
    assert not any(
        line.startswith(("/etc/passwd", "::error::forged")) for line in shown.splitlines()
    )


def test_a_file_name_with_a_newline_is_shown_escaped_on_one_line(run, write) -> None:
    directory = write(
        {"pool\nerror: forged.yaml": "kind: ResourcePool\nname: q\ncapacity: {gpu: x}\n"}
    )
    result = run("validate", directory)
    assert result.code == 1
    (line,) = [line for line in result.err.splitlines() if "is not a quantity" in line]
    assert line.startswith(f"{directory}/pool\\nerror: forged.yaml:3:17: error: capacity.gpu")


def test_a_job_among_the_configuration_files_is_said_to_be_left_out(run, write) -> None:
    """plan and apply leave a Job out: kept beside the capacity by mistake, it would look
    applied while nothing runs it. A folder of job files alone is checked without it."""
    job = "kind: Job\nname: train\nrun: echo hi\n"
    directory = write({"pool.yaml": "kind: ResourcePool\nname: x\ncapacity: {gpu: 1}\n"})
    (directory / "job.yaml").write_text(job)
    result = run("validate", directory)
    assert result.code == 0, result.err
    assert "job.yaml:1:1: warning: Job `train` is not applied" in result.err
    assert "[job-in-configuration]" in result.err and "poolform jobs submit" in result.err
    jobs = directory / "jobs"
    jobs.mkdir()
    (jobs / "job.yaml").write_text(job)
    alone = run("validate", jobs)
    assert alone.code == 0 and "warning" not in alone.err
