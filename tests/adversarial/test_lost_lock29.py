"""`state rm` and `import` that lost their team state's lock before they changed the cloud.

Both change the cloud as well as the state: `import` tags a resource as this state's, `state rm`
removes the tags. Someone runs one of them on a PostgreSQL or S3 state; while it opens the
provider (a slow cloud, a laptop put to sleep), a colleague finds the state locked, breaks the
lock with `force-unlock` and goes on with their own work (an S3 lease running out does the
same). Before, the first command tagged or untagged the resource anyway, under a lock it no
longer held: an untagging could strip a resource the colleague had just imported again, and an
import left a tagged resource its state write then refused. Now each confirms its lock just
before that change (as apply does before each change, test_lost_lock28.py) and stops: exit 1,
the cloud as it was.

The commands run in a real subprocess through the CLI's entry point; the one thing added is
the moment: the colleague's `poolform` commands run inside the provider's opening."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.scenario.installed import poolform_command
from tests.state.services import moto_s3, s3_endpoint, team_configuration

__all__ = ["moto_s3", "s3_endpoint"]  # the S3 fixtures (moto in server mode, over HTTP)

POOLS = "kind: ResourcePool\nname: shared\ncapacity: {seat: 3}\n"

# Runs `poolform ARGS...` through the CLI's entry point, and the colleague's break of the lock
# (read its ID from a refused plan, then force-unlock it) when the command opens its provider.
BROKEN_WHILE_OPENING = """
import re, subprocess, sys
import reconciler.usecases.importing as importing

command, directory = __COMMAND__, sys.argv[1]
real = importing.open_provider

def opening(*args, **kwargs):
    refused = subprocess.run([*command, "plan", directory], capture_output=True, text=True)
    lock_id = re.search(r"lock ID ([0-9a-f-]{36})", refused.stderr).group(1)
    broken = subprocess.run([*command, "force-unlock", lock_id, "--chdir", directory],
                            capture_output=True, text=True)
    assert broken.returncode == 0, broken.stderr
    return real(*args, **kwargs)

importing.open_provider = opening
from reconciler.cli.main import entrypoint
sys.argv = ["poolform", *sys.argv[2:]]
entrypoint()
"""


@pytest.fixture(params=["postgres", "s3"])
def team(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A configuration on a team backend: (its directory, the environment it needs)."""
    with team_configuration(request, tmp_path, POOLS) as made:
        yield made


def with_lock_broken_while_opening(
    directory: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    script = BROKEN_WHILE_OPENING.replace("__COMMAND__", repr(poolform_command()))
    return subprocess.run(
        [sys.executable, "-c", script, str(directory), *args],
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1", **env},
        timeout=300,
    )


def local_cloud(directory: Path) -> list[tuple[str, str, str]]:
    """Every object of the local cloud: (its id, the lineage it is marked with, its tags)."""
    path = directory / ".poolform" / "local-cloud.db"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return sorted(db.execute("SELECT id, lineage, tags FROM objects").fetchall())


def object_id(pf: Pf, directory: Path, env: dict[str, str]) -> str:
    shown = pf("state", "show", "resource_pool.shared", "--chdir", directory, env=env)
    assert shown.returncode == 0, shown.stderr
    ids: dict[str, str] = json.loads(shown.stdout)["provider_ids"]
    return ids["object"]


def test_state_rm_whose_lock_was_broken_before_untagging_leaves_the_cloud_tagged(
    team: tuple[Path, dict[str, str]], pf: Pf
) -> None:
    directory, env = team
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    cloud = local_cloud(directory)
    assert cloud and cloud[0][1]  # the pool's object, marked with this state's lineage

    run = with_lock_broken_while_opening(
        directory, env, "state", "rm", "resource_pool.shared", "--chdir", str(directory)
    )

    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    assert "lost the state lock" in run.stderr, run.stderr
    assert "still marks" in run.stderr and "poolform import resource_pool.shared" in run.stderr
    assert local_cloud(directory) == cloud  # still tagged: nothing was changed after the loss


def test_import_whose_lock_was_broken_before_tagging_leaves_the_cloud_untagged(
    team: tuple[Path, dict[str, str]], pf: Pf
) -> None:
    directory, env = team
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    provider_id = object_id(pf, directory, env)
    forgotten = pf("state", "rm", "resource_pool.shared", "--chdir", directory, env=env)
    assert forgotten.returncode == 0, forgotten.stderr
    cloud = local_cloud(directory)
    assert cloud == [(provider_id, "", "{}")]  # untagged: no state's any more

    run = with_lock_broken_while_opening(
        directory, env, "import", "resource_pool.shared", provider_id, "--chdir", str(directory)
    )

    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr, run.stderr
    assert "lost the state lock" in run.stderr, run.stderr
    assert local_cloud(directory) == cloud  # not tagged as this state's
    listed = pf("state", "list", "--chdir", directory, env=env)
    assert listed.returncode == 0 and listed.stdout.split() == [], listed.stdout + listed.stderr
