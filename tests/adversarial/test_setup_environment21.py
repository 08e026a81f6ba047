"""A worker pool's `setup` (the local provider) ran with the whole environment of whoever ran
`apply`: the team state's `POOLFORM_PG_URL` and `PGPASSWORD`, the cloud keys
(`AWS_SECRET_ACCESS_KEY`), every token in the operator's shell, were in the environment of a
script taken from the configuration, which a pull request may change, and in `setup.log`
after an `env` or a `set -x`. A cloud's worker boots with what its launch declares, never the
laptop's; jobs already got a base only. Now `setup` gets the same base as a job (PATH, HOME,
USER, LOGNAME, LANG, LC_*, TZ, TMPDIR, SHELL, TERM), then the pool's `envs` and `secrets`,
then POOLFORM_WORKER_ID."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.adversarial.conftest import Pf
from tests.scenario.installed import poolform_command

SECRETS = {
    "AWS_SECRET_ACCESS_KEY": "aws-secret-21",
    "PGPASSWORD": "pg-secret-21",
    "POOLFORM_PG_URL": "postgresql://u:pg-url-secret-21@db/x",
    "GITHUB_TOKEN": "ghp-secret-21",
}
BASE = {"LANG": "C.UTF-8", "LC_TIME": "C", "TZ": "Europe/Oslo", "TERM": "xterm-21"}

CONFIGURATION = """kind: Cluster
name: c
provider: local
---
kind: WorkerPool
name: w
pool:
  workers: 1
resources:
  cpus: 1
envs:
  DECLARED: from-the-pool
secrets:
  TOKEN: ${env:SETUP_TOKEN}
setup: |
  env -0 > setup.env
"""


def _setup_environment(directory: Path) -> dict[str, str]:
    [written] = (directory / ".poolform" / "workers").glob("*/setup.env")
    entries = written.read_bytes().decode().split("\0")
    return dict(entry.split("=", 1) for entry in entries if "=" in entry)


def test_setup_sees_the_base_and_its_pool_never_the_operators_secrets(
    pf: Pf, tmp_path: Path
) -> None:
    (tmp_path / "pool.yaml").write_text(CONFIGURATION)
    env = {**SECRETS, **BASE, "SETUP_TOKEN": "declared-secret-21"}
    result = pf("apply", tmp_path, "--auto-approve", env=env)
    assert result.returncode == 0, result.stderr
    seen = _setup_environment(tmp_path)
    for name in SECRETS:
        assert name not in seen, name
    assert not any("secret-21" in value and name != "TOKEN" for name, value in seen.items())
    assert {name: seen.get(name) for name in BASE} == BASE
    assert seen["PATH"] == os.environ["PATH"]
    assert seen["HOME"] == os.environ["HOME"]
    assert seen["DECLARED"] == "from-the-pool"
    assert seen["TOKEN"] == "declared-secret-21"
    assert seen["POOLFORM_WORKER_ID"].startswith("i-")


def test_setup_without_home_gets_the_accounts(tmp_path: Path) -> None:
    """A service manager (or `env -i`) may start apply with no HOME: setup's tools (pip, git)
    need one, and get the account's, as a job does."""
    import pwd

    (tmp_path / "pool.yaml").write_text(CONFIGURATION)
    env = {name: value for name, value in os.environ.items() if name not in ("HOME", "USER")}
    env.update(CI="true", NO_COLOR="1", SETUP_TOKEN="t")
    command = [*poolform_command(), "apply", str(tmp_path), "--auto-approve"]
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    seen = _setup_environment(tmp_path)
    account = pwd.getpwuid(os.getuid())
    assert (seen["HOME"], seen["USER"]) == (account.pw_dir, account.pw_name)
