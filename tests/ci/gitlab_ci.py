"""Runs a .gitlab-ci.yml pipeline's jobs the way GitLab and its runner do, on this machine.

`workflow:rules` and each job's `rules:` are evaluated (`$VAR == "x"`, `$A == $B`, `!=`, `&&`,
`||`, parentheses, `changes:` against the pipeline's changed files); the jobs that run do so in
stage order, each in a fresh clone at the pipeline's commit, with GitLab's predefined variables
(the API at the fake GitLab), the project's CI/CD variables, the `id_tokens`, and the file's
`variables:`. `before_script` and `script` lines run in one bash session that stops at the first
failing line; the job's `artifacts:paths` are kept by the fake GitLab when the job succeeds. The
line that installs poolform with pip is recognised and not run: the test runs the poolform
being tested.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.ci.fake_gitlab import PROJECT_ID, FakeGitLab, Job
from tests.ci.globs import matches_any
from tests.ci.repo import Origin

RULE_TOKEN = re.compile(
    r'\s*(?:(?P<var>\$\{?[A-Za-z_]\w*\}?)|(?P<string>"[^"]*"|\'[^\']*\')|(?P<op>==|!=|&&|\|\||\(|\)))'
)
VARIABLE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
RESERVED = {"default", "workflow", "variables", "stages", "include", "image", "before_script"}


@dataclass(frozen=True)
class Pipeline:
    source: str  # merge_request_event | push | schedule
    sha: str
    branch: str | None
    merge_request: int | None = None
    changed: Sequence[str] = ()
    variables: Mapping[str, str] = field(default_factory=dict)  # e.g. a schedule's
    target_branch: str = "main"  # a merge request pipeline's


@dataclass
class JobRun:
    name: str
    code: int
    output: str
    workspace: Path

    @property
    def conclusion(self) -> str:
        return "success" if self.code == 0 else "failure"


@dataclass
class GitLabRunner:
    gitlab: FakeGitLab
    origin: Origin
    work: Path
    environ: Mapping[str, str]
    project_variables: Mapping[str, str]
    prepare: Callable[[Path], None]
    runs: int = 0


def load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text())


def _rule_holds(expression: str, variables: Mapping[str, str]) -> bool:
    tokens, position = [], 0
    while position < len(expression.rstrip()):
        match = RULE_TOKEN.match(expression, position)
        if not match:
            raise AssertionError(f"cannot evaluate rule {expression!r} at {position}")
        tokens.append((match.lastgroup, match.group(match.lastgroup or "")))
        position = match.end()
    at = 0

    def value() -> str | None:
        nonlocal at
        kind, text = tokens[at]
        at += 1
        if kind == "var":
            return variables.get(text.strip("${}")) or None
        if kind == "string":
            return text[1:-1]
        raise AssertionError(f"unexpected {text!r} in rule {expression!r}")

    def comparison() -> bool:
        nonlocal at
        if tokens[at][1] == "(":
            at += 1
            result = disjunction()
            at += 1  # )
            return result
        left = value()
        if at < len(tokens) and tokens[at][1] in ("==", "!="):
            operator = tokens[at][1]
            at += 1
            same = left == value()
            return same if operator == "==" else not same
        return left is not None

    def conjunction() -> bool:
        nonlocal at
        result = comparison()
        while at < len(tokens) and tokens[at][1] == "&&":
            at += 1
            result = comparison() and result
        return result

    def disjunction() -> bool:
        nonlocal at
        result = conjunction()
        while at < len(tokens) and tokens[at][1] == "||":
            at += 1
            result = conjunction() or result
        return result

    return disjunction()


def _rules_pass(
    rules: Sequence[Mapping[str, Any]], variables: Mapping[str, str], changed: Sequence[str]
) -> bool:
    for rule in rules:
        if "if" in rule and not _rule_holds(rule["if"], variables):
            continue
        if "changes" in rule and not matches_any(changed, rule["changes"]):
            continue
        return bool(rule.get("when", "on_success") != "never")
    return False


def predefined(pipeline: Pipeline, gitlab: FakeGitLab) -> dict[str, str]:
    values = {
        "CI": "true",
        "GITLAB_CI": "true",
        "CI_API_V4_URL": f"{gitlab.url}/api/v4",
        "CI_SERVER_URL": gitlab.url,
        "CI_PROJECT_ID": PROJECT_ID,
        "CI_COMMIT_SHA": pipeline.sha,
        "CI_DEFAULT_BRANCH": "main",
        "CI_PIPELINE_SOURCE": pipeline.source,
    }
    if pipeline.branch:
        values["CI_COMMIT_BRANCH"] = pipeline.branch
    if pipeline.merge_request is not None:
        values["CI_MERGE_REQUEST_IID"] = str(pipeline.merge_request)
        values["CI_MERGE_REQUEST_TARGET_BRANCH_NAME"] = pipeline.target_branch
    return {**values, **pipeline.variables}


def expand(text: str, variables: Mapping[str, str]) -> str:
    return VARIABLE.sub(lambda m: variables.get(m[1] or m[2], ""), text)


def selected_jobs(
    config: Mapping[str, Any], variables: Mapping[str, str], changed: Sequence[str]
) -> list[str]:
    workflow = config.get("workflow", {}).get("rules")
    if workflow is not None and not _rules_pass(workflow, variables, changed):
        return []
    stages = config.get("stages", ["build", "test", "deploy"])
    jobs = [
        name
        for name, job in config.items()
        if name not in RESERVED
        and not name.startswith(".")
        and _rules_pass(job.get("rules", [{}]), variables, changed)
    ]
    return sorted(jobs, key=lambda name: stages.index(config[name].get("stage", "test")))


def run_pipeline(path: Path, pipeline: Pipeline, runner: GitLabRunner) -> list[JobRun]:
    config = load(path)
    base = {**runner.project_variables, **predefined(pipeline, runner.gitlab)}
    recorded = runner.gitlab.new_pipeline(pipeline.sha, pipeline.merge_request)
    runs = []
    for name in selected_jobs(config, base, pipeline.changed):
        job = config[name]
        default = config.get("default", {})
        job_id = runner.gitlab.next_id()
        runner.runs += 1
        workspace = runner.work / f"job-{runner.runs}"
        runner.origin.checkout(pipeline.sha, workspace)
        runner.prepare(workspace)
        variables = {
            **base,
            "CI_JOB_ID": str(job_id),
            "CI_JOB_NAME": name,
            "CI_JOB_URL": f"{runner.gitlab.url}/-/jobs/{job_id}",
            "CI_PIPELINE_ID": str(recorded.id),
            "CI_PROJECT_DIR": str(workspace),
            "CI_BUILDS_DIR": str(runner.work),
        }
        for token in {**default.get("id_tokens", {}), **job.get("id_tokens", {})}:
            variables[token] = f"header.{token.lower()}-claims.signature"  # a JWT's shape
        for source in (config.get("variables", {}), job.get("variables", {})):
            for key, raw in source.items():
                variables[key] = expand(str(raw), variables)
        lines = [*job.get("before_script", default.get("before_script", [])), *job["script"]]
        script = "\n".join(
            "true  # poolform is installed: the one under test"
            if re.match(r"pip install\b.*\bpoolform\b", line)
            else line
            for line in lines
        )
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
            cwd=workspace,
            env={**runner.environ, **variables},
            capture_output=True,
            stdin=subprocess.DEVNULL,
            text=True,
            timeout=600,
            check=False,
        )
        run = JobRun(name, done.returncode, done.stdout + done.stderr, workspace)
        runs.append(run)
        kept = {}
        if run.code == 0:
            for item in job.get("artifacts", {}).get("paths", []):
                if (workspace / item).is_file():
                    kept[item] = (workspace / item).read_bytes()
        status = "success" if run.code == 0 else "failed"
        recorded.jobs.append(Job(job_id, name, status, kept))
        if run.code != 0:
            break  # later stages do not run
    return runs
