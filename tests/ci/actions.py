"""Runs a GitHub Actions workflow file's job the way a runner does, on this machine.

Each `run:` step runs in bash (`-eo pipefail`, GitHub's default shell) in the job's workspace
with the environment a runner gives it: GITHUB_* variables pointing at the fake API, the
workflow's, job's and step's `env:` with `${{ }}` expressions evaluated, GITHUB_OUTPUT,
GITHUB_ENV and GITHUB_STEP_SUMMARY files. `if:` conditions are evaluated, steps' outputs kept.
The actions (`uses:`) are the platform's: checkout clones the test's repository, upload-artifact
stores into the fake GitHub, setup-python is a no-op (poolform is already installed), and the
cloud credential actions must be skipped (the test sets no cloud variables). The step that
installs poolform with pip is recognised and not run: the test runs the poolform being tested.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.ci.expressions import condition, interpolate
from tests.ci.fake_github import REPO, FakeGitHub
from tests.ci.globs import matches_any
from tests.ci.repo import Origin


@dataclass(frozen=True)
class Event:
    name: str  # pull_request | push | schedule
    sha: str  # GITHUB_SHA
    ref: str
    payload: Mapping[str, Any]  # the `github.event` context
    changed: Sequence[str] = ()  # files the push or pull request changed


@dataclass
class Step:
    name: str
    conclusion: str  # success | failure | skipped
    code: int | None
    output: str


@dataclass
class JobRun:
    steps: list[Step] = field(default_factory=list)
    workspace: Path | None = None

    @property
    def conclusion(self) -> str:
        return "failure" if any(s.conclusion == "failure" for s in self.steps) else "success"

    @property
    def output(self) -> str:
        return "\n".join(s.output for s in self.steps)

    def step(self, name: str) -> Step:
        return next(s for s in self.steps if s.name == name)


@dataclass
class Runner:
    """The platform around the job: the repository, the fake API and the runner's machine."""

    github: FakeGitHub
    origin: Origin
    work: Path
    environ: Mapping[str, str]
    secrets: Mapping[str, str]
    prepare: Callable[[Path], None]  # after checkout: what the runner's machine provides
    token: str
    runs: int = 0

    def new_workspace(self) -> Path:
        self.runs += 1
        return self.work / f"run-{self.runs}"


def load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text())


def triggered(workflow: Mapping[str, Any], event: Event) -> bool:
    """Whether the workflow's `on:` starts it for this event (branches and paths filters)."""
    on = workflow["on"]
    if event.name not in on:
        return False
    spec = on[event.name] or {}
    if event.name == "push":
        branch = event.ref.removeprefix("refs/heads/")
        if "branches" in spec and branch not in spec["branches"]:
            return False
    if event.name == "pull_request":  # a pull request's `branches` filter is its base branch
        base = event.payload["pull_request"].get("base", {}).get("ref", "main")
        if "branches" in spec and base not in spec["branches"]:
            return False
    return "paths" not in spec or matches_any(event.changed, spec["paths"])


def _outputs(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    lines = path.read_text().splitlines() if path.exists() else []
    index = 0
    while index < len(lines):
        line = lines[index]
        heredoc = re.fullmatch(r"([A-Za-z_][\w-]*)<<(.+)", line)
        if heredoc:
            end = lines.index(heredoc[2], index + 1)
            values[heredoc[1]] = "\n".join(lines[index + 1 : end])
            index = end + 1
            continue
        if "=" in line:
            key, value = line.split("=", 1)
            values[key] = value
        index += 1
    return values


def run_workflow(path: Path, event: Event, runner: Runner) -> JobRun:
    workflow = load(path)
    assert triggered(workflow, event), f"{path.name} does not run on {event.name}"
    (job_name, job), *others = workflow["jobs"].items()
    assert not others, "one job per workflow"
    workspace = runner.new_workspace()
    run_id = 7000 + runner.runs
    github = {
        "event": event.payload,
        "event_name": event.name,
        "sha": event.sha,
        "ref": event.ref,
        "repository": REPO,
        "token": runner.token,
        "run_id": str(run_id),
        "server_url": "https://github.example",
        "api_url": runner.github.url,
        "workspace": str(workspace),
    }
    contexts: dict[str, Any] = {
        "github": github,
        "secrets": dict(runner.secrets),
        "vars": {},
        "steps": {},
        "env": {},
        "runner": {"temp": str(runner.work / "tmp"), "os": "Linux"},
    }
    run = JobRun(workspace=workspace)
    failed = False
    functions = {
        "success": lambda: not failed,
        "failure": lambda: failed,
        "always": lambda: True,
        "cancelled": lambda: False,
    }
    if not condition(job.get("if"), contexts, functions):
        return run
    workflow_env = {
        k: interpolate(str(v), contexts) for k, v in (workflow.get("env") or {}).items()
    }
    contexts["env"] = workflow_env
    job_env = {
        **workflow_env,
        **{k: interpolate(str(v), contexts) for k, v in (job.get("env") or {}).items()},
    }
    exported: dict[str, str] = {}
    defaults = {
        **runner.environ,
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": runner.github.url,
        "GITHUB_SERVER_URL": github["server_url"],
        "GITHUB_REPOSITORY": REPO,
        "GITHUB_SHA": event.sha,
        "GITHUB_REF": event.ref,
        "GITHUB_EVENT_NAME": event.name,
        "GITHUB_RUN_ID": str(run_id),
        "GITHUB_JOB": job_name,
        "GITHUB_WORKSPACE": str(workspace),
        "RUNNER_TEMP": contexts["runner"]["temp"],
    }
    Path(contexts["runner"]["temp"]).mkdir(parents=True, exist_ok=True)
    for index, spec in enumerate(job["steps"]):
        name = spec.get("name") or spec.get("uses") or spec.get("run", "").strip()
        contexts["env"] = {**job_env, **exported}
        step_env = {
            **contexts["env"],
            **{k: interpolate(str(v), contexts) for k, v in (spec.get("env") or {}).items()},
        }
        contexts["env"] = step_env
        if not condition(spec.get("if"), contexts, functions):
            run.steps.append(Step(name, "skipped", None, ""))
            continue
        if "uses" in spec:
            inputs = {k: interpolate(str(v), contexts) for k, v in (spec.get("with") or {}).items()}
            step = _use(spec["uses"], inputs, name, workspace, event, runner, run_id)
            outputs: dict[str, str] = {}
        else:
            files = runner.work / "tmp" / f"step-{runner.runs}-{index}"
            files.mkdir(parents=True)
            environment = {
                **defaults,
                **exported,
                **step_env,
                "GITHUB_OUTPUT": str(files / "output"),
                "GITHUB_ENV": str(files / "env"),
                "GITHUB_STEP_SUMMARY": str(files / "summary"),
            }
            step = _run(interpolate(spec["run"], contexts), name, workspace, environment)
            outputs = _outputs(files / "output")
            exported.update(_outputs(files / "env"))
        if spec.get("id"):
            contexts["steps"][spec["id"]] = {"outputs": outputs, "conclusion": step.conclusion}
        failed = failed or step.conclusion == "failure"
        run.steps.append(step)
    return run


def _run(script: str, name: str, workspace: Path, environment: Mapping[str, str]) -> Step:
    if re.match(r"pip install\b.*\bpoolform\b", script.strip()):
        return Step(name, "success", 0, "(poolform is installed: the one under test)")
    workspace.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=workspace,
        env=dict(environment),
        capture_output=True,
        stdin=subprocess.DEVNULL,
        text=True,
        timeout=600,
        check=False,
    )
    conclusion = "success" if done.returncode == 0 else "failure"
    return Step(name, conclusion, done.returncode, done.stdout + done.stderr)


def _use(
    action: str,
    inputs: Mapping[str, str],
    name: str,
    workspace: Path,
    event: Event,
    runner: Runner,
    run_id: int,
) -> Step:
    uses = action.split("@")[0]
    if uses == "actions/checkout":
        runner.origin.checkout(inputs.get("ref") or event.sha, workspace)
        runner.prepare(workspace)
        return Step(name, "success", 0, f"checked out {inputs.get('ref') or event.sha}")
    if uses == "actions/setup-python":
        return Step(name, "success", 0, "")
    if uses == "actions/upload-artifact":
        path = workspace / inputs["path"]
        if not path.exists():
            missing = inputs.get("if-no-files-found", "warn")
            return Step(name, "failure" if missing == "error" else "success", None, "no files")
        head = (event.payload.get("pull_request") or {}).get("head", {}).get("sha", event.sha)
        runner.github.upload_artifact(inputs["name"], {path.name: path.read_bytes()}, run_id, head)
        return Step(name, "success", 0, f"uploaded {inputs['name']}")
    raise AssertionError(f"the test does not provide the action {action} (step {name!r})")
