"""Environment secrets: never in output, plan files, state or the local cloud, not even in a
failed setup's log tail or an error message; and `${env:...}` where it is not read is an error,
not the literal text handed to a worker."""

from __future__ import annotations

from pathlib import Path

from tests.adversarial.conftest import Pf

CANARY = "CANARY-5e1d-never-print"
ENV = {"POOLFORM_ADV_SECRET": CANARY}


def every_byte(directory: Path) -> bytes:
    return b"".join(
        p.read_bytes()
        for p in sorted(directory.rglob("*"))
        if p.is_file() and not p.is_symlink() and p.suffix != ".yaml"
    )


def worker_pool(setup: str) -> str:
    return (
        "kind: WorkerPool\nname: cpu-workers\npool: {workers: 1}\n"
        "resources: {instance_type: c5.xlarge}\n"
        "secrets: {TOKEN: '${env:POOLFORM_ADV_SECRET}'}\n"
        f"setup: {setup!r}\n"
    )


def test_a_failed_setup_that_prints_its_secret_shows_it_redacted(pf: Pf, quick: Path) -> None:
    (quick / "worker-pool.yaml").write_text(worker_pool('echo "token=$TOKEN"; exit 3'))
    result = pf("apply", quick, "--auto-approve", env=ENV)
    assert result.returncode == 1
    assert "exited with status 3" in result.stdout + result.stderr
    assert CANARY not in result.stdout + result.stderr
    assert CANARY.encode() not in every_byte(quick / ".poolform")


def test_a_secret_never_reaches_plans_state_or_the_cloud(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    (quick / "worker-pool.yaml").write_text(worker_pool('test -n "$TOKEN"'))
    outputs = [pf("plan", quick, flag, env=ENV) for flag in ("--json", "--markdown")]
    outputs.append(pf("plan", quick, "-out", tmp_path / "p", env=ENV))
    outputs.append(pf("apply", tmp_path / "p", env=ENV))
    outputs.append(pf("state", "pull", "--chdir", quick, env=ENV))
    outputs.append(pf("drift", quick, "--json", env=ENV))
    for result in outputs:
        assert result.returncode == 0, result.stderr
        assert CANARY not in result.stdout + result.stderr
    assert CANARY.encode() not in (tmp_path / "p").read_bytes()
    files = [p for p in (quick / ".poolform").rglob("*") if p.is_file() and not p.is_symlink()]
    leaked = [str(p) for p in files if CANARY.encode() in p.read_bytes()]
    assert leaked == []


def test_an_env_reference_where_it_is_not_read_is_a_located_error(pf: Pf, quick: Path) -> None:
    (quick / "worker-pool.yaml").write_text(
        "kind: WorkerPool\nname: cpu-workers\npool: {workers: 1}\n"
        "resources: {instance_type: c5.xlarge}\n"
        "envs:\n  TOKEN: ${env:POOLFORM_ADV_SECRET}\n"
        "setup: echo $TOKEN\n"
    )
    result = pf("plan", quick, env=ENV)
    assert result.returncode == 1
    assert "worker-pool.yaml:6:10: error: envs.TOKEN" in result.stderr
    assert "env-not-read-here" in result.stderr
    assert not (quick / ".poolform").exists()


def test_a_secret_used_as_an_instance_type_is_not_echoed(pf: Pf, quick: Path) -> None:
    pool = quick / "worker-pool.yaml"
    pool.write_text(pool.read_text().replace("c5.xlarge", "'${env:POOLFORM_ADV_SECRET}'"))
    result = pf("plan", quick, env=ENV)
    assert result.returncode == 1 and CANARY not in result.stdout + result.stderr


def test_worker_directories_are_private(pf: Pf, quick: Path) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    workers = quick / ".poolform" / "workers"
    modes = {p: p.stat().st_mode & 0o777 for p in workers.rglob("*") if not p.is_symlink()}
    assert modes and all(m & 0o077 == 0 for m in modes.values()), modes
