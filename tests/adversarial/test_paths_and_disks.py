"""Odd things where configuration files or state should be: FIFOs, devices, symlinks to
system files, directories named *.yaml, a directory reached through a symlink, a full disk.
Each is an error naming the file (or works, for the symlinked directory), never a hang or an
internal error."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf, tree_digest

ODD_FILES: dict[str, tuple[Callable[[Path], None], str]] = {
    "a FIFO": (lambda p: os.mkfifo(p), "is a FIFO"),
    "a symlink to /dev/zero": (lambda p: p.symlink_to("/dev/zero"), "is a device"),
    "a symlink to /dev/urandom": (lambda p: p.symlink_to("/dev/urandom"), "is a device"),
    "a directory": (lambda p: p.mkdir(), "is a directory"),
    "a symlink to its own directory": (lambda p: p.symlink_to(p.parent), "is a directory"),
    "a symlink to /etc/passwd": (lambda p: p.symlink_to("/etc/passwd"), "not-a-mapping"),
}


@pytest.mark.parametrize("name", sorted(ODD_FILES))
def test_an_odd_yaml_entry_is_a_named_error_never_a_hang(pf: Pf, quick: Path, name: str) -> None:
    make, says = ODD_FILES[name]
    make(quick / "odd.yaml")
    result = pf("plan", quick, timeout=60)
    assert result.returncode == 1, result.stdout[-300:]
    assert "odd.yaml" in result.stderr and says in result.stderr, result.stderr
    assert "internal error" not in result.stderr
    assert not (quick / ".poolform").exists()


def test_a_configuration_reached_through_a_symlink_plans_and_applies(
    pf: Pf, quick: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link"
    link.symlink_to(quick)
    assert pf("apply", link, "--auto-approve").returncode == 0
    assert pf("plan", quick, "--detailed-exitcode").returncode == 0  # one state, both ways


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 400 KiB tmpfs (root only; skipped elsewhere)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(mount)], capture_output=True
    )
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_is_an_error_and_the_next_apply_converges(
    pf: Pf, quick: Path, tiny_disk: Path
) -> None:
    cluster = quick / "cluster.yaml"
    cluster.write_text(cluster.read_text() + f"state:\n  path: {tiny_disk}/state.db\n")
    filler = tiny_disk / "filler"
    filler.write_bytes(b"\0" * (360 * 1024))
    full = pf("apply", quick, "--auto-approve")
    assert full.returncode == 1
    assert "disk is full" in full.stderr and "internal error" not in full.stderr
    filler.unlink()
    for leftover in tiny_disk.iterdir():  # what the failed run made: moved to a roomier place
        shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()
    cluster.write_text(cluster.read_text().replace(f"{tiny_disk}/state.db", ".poolform/state.db"))
    assert pf("apply", quick, "--auto-approve").returncode == 0
    assert pf("plan", quick, "--detailed-exitcode").returncode == 0


def test_a_read_only_configuration_directory_still_validates(pf: Pf, quick: Path) -> None:
    before = tree_digest(quick)
    os.chmod(quick, 0o555)
    try:
        assert pf("validate", quick).returncode == 0
    finally:
        os.chmod(quick, 0o755)
    assert tree_digest(quick) == before
