"""A huge file where a saved plan is expected.

`poolform apply FILE`, `show FILE` and `plan -out FILE` read FILE whole to tell whether it is a
plan (and the first two read it whole again to parse it): a disk image, an archive or a core
dump named by mistake was read into memory, several times its size, and under a memory limit
(a CI container, `ulimit -v`) the command ended in `internal error: MemoryError`. Now the first
bytes tell: a large file that does not start as a JSON object is no plan and is never read
whole, and a file above the plans' size limit is refused by its size; either way a clear error,
exit 1, nothing changed. Each command here runs with 1 GiB of address space, so reading a
3 GiB file whole cannot succeed; the files are sparse and take no disk."""

from __future__ import annotations

import resource
import subprocess
from pathlib import Path

from tests.adversarial.conftest import Pf, tree_digest
from tests.scenario.installed import poolform_command

GIB = 1 << 30


def limited(*args: object) -> subprocess.CompletedProcess[str]:
    """The installed command, with an address space of 1 GiB (its start needs far less)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (GIB, GIB))

    return subprocess.run(
        [*poolform_command(), *map(str, args)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "CI": "true"},
        preexec_fn=limit,
        timeout=120,
    )


def sparse(path: Path, size: int, start: bytes = b"") -> Path:
    with path.open("wb") as handle:
        handle.write(start)
        handle.truncate(size)
    return path


def test_a_huge_file_that_is_no_plan_is_refused_by_apply_and_show_without_reading_it(
    tmp_path: Path,
) -> None:
    image = sparse(tmp_path / "disk.img", 3 * GIB)
    for command in ("apply", "show"):
        result = limited(command, image)
        assert result.returncode == 1, (command, result.stderr)
        assert "internal error" not in result.stderr, (command, result.stderr)
        assert f"{image} is not a" in result.stderr, (command, result.stderr)


def test_a_plan_looking_file_above_the_size_limit_is_refused_by_its_size(tmp_path: Path) -> None:
    forged = sparse(tmp_path / "plan.bin", GIB + 1, b'{"kind": "poolform-plan", "plan": "')
    for command in ("apply", "show"):
        result = limited(command, forged)
        assert result.returncode == 1, (command, result.stderr)
        assert "internal error" not in result.stderr, (command, result.stderr)
        assert "plans are limited to 128 MiB" in result.stderr, (command, result.stderr)


def test_plan_out_onto_a_huge_file_leaves_it_and_says_it_is_no_plan(
    quick: Path, tmp_path: Path, pf: Pf
) -> None:
    assert pf("apply", quick, "--auto-approve").returncode == 0
    image = sparse(tmp_path / "disk.img", 3 * GIB)
    before = tree_digest(quick)
    result = limited("plan", quick, "-out", image)
    assert result.returncode == 1, result.stderr
    assert "a file is there that is not a poolform plan; it was left as it is" in result.stderr
    assert image.stat().st_size == 3 * GIB
    assert tree_digest(quick) == before


def test_a_real_plan_still_applies_and_a_small_non_plan_is_still_named(
    quick: Path, tmp_path: Path, pf: Pf
) -> None:
    saved = tmp_path / "plan.bin"
    assert pf("plan", quick, "-out", saved).returncode == 0
    assert limited("show", saved).returncode == 0
    note = tmp_path / "note.txt"
    note.write_text("not a plan\n")
    shown = limited("show", note)
    assert shown.returncode == 1 and "is not a poolform plan file (not JSON)" in shown.stderr
    applied = limited("apply", saved)
    assert applied.returncode == 0, applied.stderr
    assert "Apply complete! Resources: 8 added" in applied.stdout


def test_show_of_a_saved_plan_prints_what_plan_printed_when_saving_it(
    quick: Path, tmp_path: Path, pf: Pf
) -> None:
    """A reviewer who doubts the pull request's comment reads the plan file with `show`: it
    listed each change's attributes in another order (the file's keys were sorted), so the two
    could not be compared line by line."""
    saved = tmp_path / "plan.bin"
    planned = pf("plan", quick, "-out", saved, "--markdown", "--label", "pull request #3")
    assert planned.returncode == 0, planned.stderr
    shown = pf("show", saved, "--markdown")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == planned.stdout
    as_text = pf("plan", quick, "--no-color").stdout
    shown_text = pf("show", saved, "--no-color").stdout
    body = as_text[as_text.index("Resource actions") : as_text.index("Plan: ")]
    assert body in shown_text


def test_a_plan_from_a_newer_poolform_says_so_and_how_to_apply_it(
    quick: Path, tmp_path: Path, pf: Pf
) -> None:
    """A plan file of a newer format (a CI runner upgraded first) was refused with only
    "re-plan", as if it were damaged; it names the newer release and the two ways on."""
    import json

    saved = tmp_path / "plan.bin"
    assert pf("plan", quick, "-out", saved).returncode == 0
    envelope = json.loads(saved.read_text())
    envelope["version"] = 4
    saved.write_text(json.dumps(envelope))
    before = tree_digest(quick)
    for command in ("apply", "show"):
        refused = pf(command, saved)
        assert refused.returncode == 1, refused.stderr
        assert "plan format 4, made by a newer poolform" in refused.stderr, refused.stderr
        assert "the poolform release that made it" in refused.stderr, refused.stderr
    assert tree_digest(quick) == before
