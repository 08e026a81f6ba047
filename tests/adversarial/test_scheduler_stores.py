"""The scheduler's files damaged or foreign: a truncated, random or directory queue database,
another program's database where the queue belongs, a job directory that cannot be written,
no state at all, a state that is not poolform's; and `--json` that stays valid JSON whatever
the names hold."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import jsonschema
import pytest

from tests.adversarial.conftest import Pf
from tests.adversarial.scheduler_setup import applied, job_file, refused
from tests.scheduler.scenario import SCHEMA, TERMINAL, cycle_until, ok, statuses

COMMANDS = (
    ("jobs", "list"),
    ("jobs", "show", "1"),
    ("pools", "status"),
    ("scheduler", "run", "--once"),
)


def _damage(store: Path, how: str) -> None:
    for suffix in ("-wal", "-shm"):
        Path(f"{store}{suffix}").unlink(missing_ok=True)
    if how == "truncated":
        store.write_bytes(store.read_bytes()[:5000])
    elif how == "random":
        store.write_bytes(bytes(range(256)) * 8)
    elif how == "directory":
        store.unlink()
        store.mkdir()
    elif how == "foreign":
        store.unlink()
        with sqlite3.connect(store) as db:
            db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
            db.execute("INSERT INTO invoices (total) VALUES (12.5)")
        sqlite3.connect(store).close()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "directory"


@pytest.mark.parametrize("how", ["truncated", "random", "directory", "foreign"])
def test_a_damaged_or_foreign_queue_database_is_named_and_left_alone(
    pf: Pf, tmp_path: Path, how: str
) -> None:
    directory = applied(tmp_path)
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo\n")
    ok("jobs", "submit", job, "--chdir", directory)
    store = directory / ".poolform" / "scheduler.db"
    _damage(store, how)
    before = _digest(store)
    for command in (*COMMANDS, ("jobs", "submit", job)):
        result = pf(*command, "--chdir", directory, timeout=60)
        refused(result, str(store))
        assert _digest(store) == before, command
    if how == "foreign":
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
            tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        assert tables == {"invoices"}


def test_an_empty_queue_file_is_a_fresh_queue(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path)
    store = directory / ".poolform" / "scheduler.db"
    store.write_bytes(b"")
    result = pf("jobs", "list", "--json", "--chdir", directory)
    assert (result.returncode, json.loads(result.stdout)) == (0, {"jobs": []})


def test_an_unwritable_job_directory_fails_the_job_not_the_scheduler(
    pf: Pf, tmp_path: Path
) -> None:
    """Root ignores permission bits, so the jobs directory is made a regular file: no job
    directory can be created under it, whoever runs the scheduler."""
    directory = applied(tmp_path)
    jobs_dir = directory / ".poolform" / "jobs"
    shutil.rmtree(jobs_dir, ignore_errors=True)
    jobs_dir.write_text("not a directory\n")
    job = job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo\n")
    ok("jobs", "submit", job, "--num-jobs", "2", "--chdir", directory)
    result = pf("scheduler", "run", "--once", "--chdir", directory)
    assert result.returncode == 0, result.stderr
    assert "ended 1, 2 (failed); 0 queued, 0 holding capacity" in result.stdout
    assert statuses(directory) == {1: "failed", 2: "failed"}
    listed = json.loads(ok("jobs", "list", "--json", "--chdir", directory))["jobs"]
    assert {j["reason"]["code"] for j in listed} == {"start_failed"}
    assert jobs_dir.read_text() == "not a directory\n"
    refused(pf("jobs", "logs", "1", "--chdir", directory), "output.log: Not a directory")


def test_pools_status_with_no_state_says_so(pf: Pf, tmp_path: Path) -> None:
    directory = tmp_path / "fresh"
    shutil.copytree(applied(tmp_path), directory, ignore=shutil.ignore_patterns(".poolform"))
    for extra in ((), ("--json",), ("seats",)):
        result = pf("pools", "status", *extra, "--chdir", directory)
        said = f"nothing has been applied in {directory.resolve()} yet"
        assert result.returncode == 1 and said in result.stderr
        if extra == ("--json",):  # the error document (error.schema.json), nothing else
            assert said in json.loads(result.stdout)["error"]["message"]
        else:
            assert result.stdout == ""
    assert not (directory / ".poolform").exists()  # and nothing made there


@pytest.mark.parametrize("how", ["random", "foreign"])
def test_a_state_that_is_not_poolforms_is_named_by_every_scheduler_command(
    pf: Pf, tmp_path: Path, how: str
) -> None:
    directory = applied(tmp_path)
    ok("jobs", "submit", job_file(tmp_path, "kind: Job\nname: j\npool: seats\nrun: echo\n"),
       "--chdir", directory)  # fmt: skip
    state = directory / ".poolform" / "state.db"
    _damage(state, how)
    before = _digest(state)
    for command in COMMANDS:
        result = pf(*command, "--chdir", directory, timeout=60)
        if command[:2] == ("jobs", "list"):
            continue  # the queue alone answers it: no state is read
        refused(result, "state")
        assert _digest(state) == before, command


# (as the job file writes it, what it means)
HOSTILE_SUBJECTS = [
    ('"\\u202eevil"', "\u202eevil"),
    ('"quote\\" and \\\\ backslash"', 'quote" and \\ backslash'),
    ('"line\\nbreak\\ttab"', "line\nbreak\ttab"),
    ('"\\e[31mred"', "\x1b[31mred"),
    ('"\\U0001F600 emoji"', "\U0001f600 emoji"),
]


@pytest.mark.slow  # about 10 s: five rejections, a run, and every job shown
def test_json_outputs_stay_valid_json_whatever_names_hold(pf: Pf, tmp_path: Path) -> None:
    directory = applied(tmp_path)
    for index, (subject, _) in enumerate(HOSTILE_SUBJECTS):
        job = job_file(tmp_path, f"kind: Job\nname: j{index}\nsubject: {subject}\nrun: echo\n")
        submitted = pf("jobs", "submit", job, "--json", "--chdir", directory)
        assert submitted.returncode == 1  # no policy has that subject: rejected, recorded
        jsonschema.validate(json.loads(submitted.stdout), SCHEMA)
    good = job_file(tmp_path, "kind: Job\nname: fine\npool: seats\nrun: echo fine\n")
    ok("jobs", "submit", good, "--chdir", directory)
    cycle_until(directory, "it ended", lambda: set(statuses(directory).values()) <= TERMINAL)
    listed = json.loads(ok("jobs", "list", "--json", "--chdir", directory))
    jsonschema.validate(listed, SCHEMA)
    expected = [meant for _, meant in HOSTILE_SUBJECTS]
    assert [j["subject"] for j in listed["jobs"][:-1]] == expected
    for job_id in range(1, len(HOSTILE_SUBJECTS) + 2):
        jsonschema.validate(json.loads(ok("jobs", "show", job_id, "--json", "--chdir", directory)),
                            SCHEMA)  # fmt: skip
    status = json.loads(ok("pools", "status", "--json", "--chdir", directory))
    jsonschema.validate(status, SCHEMA)
    text = ok("jobs", "list", "--chdir", directory)
    assert "\x1b" not in text and "\u202e" not in text


def test_state_moved_away_under_the_scheduler_rejects_nothing(pf: Pf, tmp_path: Path) -> None:
    """No state is not an apply that removed every pool: queued jobs stay queued until the
    state is back, and are scheduled then."""
    directory = applied(tmp_path)
    gate = tmp_path / "gate"
    job = job_file(
        tmp_path,
        "kind: Job\nname: j\npool: seats\nresources:\n  custom:\n    seat: 2\n"
        f"run: while [ ! -e {gate} ]; do sleep 0.05; done\n",
    )
    ok("jobs", "submit", job, "--num-jobs", "2", "--chdir", directory)
    ok("scheduler", "run", "--once", "--chdir", directory)
    assert statuses(directory) == {1: "running", 2: "queued"}
    state = directory / ".poolform"
    names = [p.name for p in state.glob("state.db*")]  # with SQLite's WAL companions, if any
    for name in names:
        (state / name).rename(tmp_path / name)
    gate.touch()
    result = pf("scheduler", "run", "--once", "--chdir", directory)
    assert result.returncode == 0 and "no applied state found" in result.stdout
    cycle_until(directory, "job 1 ended", lambda: statuses(directory)[1] in TERMINAL)
    assert statuses(directory) == {1: "succeeded", 2: "queued"}
    for name in names:
        (tmp_path / name).rename(state / name)
    cycle_until(directory, "job 2 ended", lambda: statuses(directory)[2] in TERMINAL)
    assert statuses(directory) == {1: "succeeded", 2: "succeeded"}
