"""An apply that lost its team state's lock while it waited at the confirmation prompt.

Someone runs `poolform apply` on a PostgreSQL or S3 state and leaves it at "Do you want to
apply these changes?" (lunch, a laptop asleep). A colleague finds the state locked, breaks the
lock with `force-unlock` (the README's way for a holder that is alive but stuck; an S3 lease
that runs out while its holder is paused does the same) and applies a change of their own. Then
the first user types `yes`.

Before, the first apply went on with its old plan: it deleted (or resized) the pool in the
cloud that the colleague had just changed and recorded, and only then, at its state write, found the lock
gone ("lost the state lock ... nothing more is written"). The state still recorded the pool,
the cloud no longer had it, and the next plan wanted to create it again: a delete nobody's
plan had in it any more. Now the run confirms it still holds the lock before each change to
the cloud (an S3 lease renewal, a look at the PostgreSQL session's lock) and stops before
changing anything: exit 1, the cloud and the state as the colleague left them."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, cloud_holds
from tests.scenario.installed import poolform_command
from tests.state.services import moto_s3, s3_endpoint, team_configuration

__all__ = ["moto_s3", "s3_endpoint"]  # the S3 fixtures (moto in server mode, over HTTP)

POOLS = """kind: ResourcePool
name: keep
capacity: {seat: 2}
---
kind: ResourcePool
name: shared
capacity: {seat: 3}
"""
PROMPT = b"Only 'yes' will be accepted"


@pytest.fixture(params=["postgres", "s3"])
def team(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A configuration on a team backend: (its directory, the environment it needs)."""
    with team_configuration(request, tmp_path, POOLS) as made:
        yield made


def waiting_at_the_prompt(
    directory: Path, env: dict[str, str]
) -> tuple[subprocess.Popen[bytes], int]:
    """`poolform apply DIR` on a terminal, once it asks for `yes` (holding the lock)."""
    controller, terminal = pty.openpty()
    run = subprocess.Popen(
        [*poolform_command(), "apply", str(directory)],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "NO_COLOR": "1", **env},
    )
    os.close(terminal)
    assert run.stdout is not None
    said = b""
    while PROMPT not in said:
        ready, _, _ = select.select([run.stdout], [], [], 120)
        chunk = os.read(run.stdout.fileno(), 4096) if ready else b""
        assert chunk, said.decode(errors="replace")  # ended, or silent for two minutes
        said += chunk
    return run, controller


# What the first user's apply does to `shared`: delete it, or resize it in place.
FIRST = {"delete": POOLS.split("---")[0], "update": POOLS.replace("seat: 3", "seat: 5")}


@pytest.mark.parametrize("change", sorted(FIRST))
def test_an_apply_whose_lock_was_broken_at_its_prompt_changes_nothing_after_yes(
    team: tuple[Path, dict[str, str]], pf: Pf, change: str
) -> None:
    directory, env = team
    assert pf("apply", directory, "--auto-approve", env=env).returncode == 0
    (directory / "pools.yaml").write_text(FIRST[change])
    first, terminal = waiting_at_the_prompt(directory, env)
    try:
        # The colleague: the state is locked; they break the lock and apply their own change,
        # which keeps `shared` and raises it.
        locked = pf("apply", directory, "--auto-approve", env=env)
        assert locked.returncode == 1, locked.stderr
        lock_id = re.search(r"lock ID ([0-9a-f-]{36})", locked.stderr)
        assert lock_id, locked.stderr
        broken = pf("force-unlock", lock_id.group(1), "--chdir", directory, env=env)
        assert broken.returncode == 0, broken.stderr
        (directory / "pools.yaml").write_text(POOLS.replace("seat: 3", "seat: 9"))
        theirs = pf("apply", directory, "--auto-approve", env=env)
        assert theirs.returncode == 0, theirs.stderr
        cloud = cloud_holds(directory)

        os.write(terminal, b"yes\n")  # back from lunch
        said, _ = first.communicate(timeout=120)
    finally:
        os.close(terminal)
        if first.poll() is None:
            first.kill()
            first.wait()

    text = said.decode(errors="replace")
    assert first.returncode == 1, text
    assert "Traceback" not in text and "internal error" not in text, text
    assert "lost the state lock" in text, text
    assert "Destroyed" not in text and "Updated" not in text, text
    assert cloud_holds(directory) == cloud  # `shared` is still in the cloud
    assert pf("state", "list", "--chdir", directory, env=env).stdout.split() == [
        "resource_pool.keep",
        "resource_pool.shared",
    ]
    after = pf("plan", directory, "--detailed-exitcode", env=env)
    assert after.returncode == 0, after.stdout + after.stderr  # the colleague's capacity, intact
