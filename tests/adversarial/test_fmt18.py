"""`poolform fmt` as `terraform fmt` and `gofmt` users expect it. It replaced a file by renaming
a new one over it: a hard link's other name kept the old text, the owner and extended
attributes were lost, and a read-only file was rewritten. A CRLF file came out LF (every line
changed), `-check=true` and `-list=false` were click's errors, a dangling link given to
`--recursive` was "not a *.yaml file", and a 12 MB file took minutes with no word."""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import pytest

from tests.adversarial.conftest import Pf
from tests.scenario.installed import poolform_command

LOOSE = "kind: ResourcePool\nname: p\ncapacity:\n    gpu: 4   # four\n"
LAID_OUT = "kind: ResourcePool\nname: p\ncapacity:\n  gpu: 4     # four\n"


def _leftovers(directory: Path) -> list[str]:
    return sorted(path.name for path in directory.iterdir() if path.name.startswith("."))


def test_a_hard_link_keeps_one_file_with_both_names(pf: Pf, tmp_path: Path) -> None:
    (tmp_path / "pool.yaml").write_text(LOOSE)
    os.link(tmp_path / "pool.yaml", tmp_path / "other-name.yml")
    inode = (tmp_path / "pool.yaml").stat().st_ino
    result = pf("fmt", tmp_path / "pool.yaml")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "pool.yaml").stat().st_ino == inode
    assert (tmp_path / "other-name.yml").read_text() == LAID_OUT
    assert _leftovers(tmp_path) == []  # no backup copy left behind


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file away takes root")
def test_the_owner_and_extended_attributes_are_kept(pf: Pf, tmp_path: Path) -> None:
    path = tmp_path / "pool.yaml"
    path.write_text(LOOSE)
    os.chown(path, 4321, 4321)
    try:
        os.setxattr(path, "user.origin", b"team-a")
        has_xattr = True
    except OSError:  # a file system without user attributes
        has_xattr = False
    result = pf("fmt", tmp_path)
    assert result.returncode == 0, result.stderr
    assert path.read_text() == LAID_OUT
    assert (path.stat().st_uid, path.stat().st_gid) == (4321, 4321)
    if has_xattr:
        assert os.getxattr(path, "user.origin") == b"team-a"


def test_a_read_only_file_is_left_alone_and_named(pf: Pf, tmp_path: Path) -> None:
    """As `terraform fmt` and `gofmt` fail on it; root could write it, so fmt checks."""
    (tmp_path / "pool.yaml").write_text(LOOSE)
    (tmp_path / "b.yaml").write_text(LOOSE.replace("name: p", "name: b"))
    (tmp_path / "pool.yaml").chmod(0o444)
    result = pf("fmt", tmp_path)
    assert result.returncode == 1
    assert "pool.yaml: error: is read-only (mode 0444); left unchanged" in result.stderr
    assert (tmp_path / "pool.yaml").read_text() == LOOSE
    assert (tmp_path / "b.yaml").read_text() == LAID_OUT.replace("name: p", "name: b")
    assert result.stdout.splitlines() == [str(tmp_path / "b.yaml")]


def _limited(bytes_: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (bytes_, bytes_))


def test_a_write_that_fails_puts_the_old_text_back(tmp_path: Path) -> None:
    """The laid-out text is longer than the file, and the file may not grow (as on a full
    disk): the old bytes are written back and no backup copy is left."""
    loose = "kind: Cluster\nname: c\nx:\n- a\n- b\n"
    (tmp_path / "c.yaml").write_text(loose)
    result = subprocess.run(
        [*poolform_command(), "fmt", str(tmp_path)],
        capture_output=True,
        text=True,
        preexec_fn=lambda: _limited(len(loose)),
    )
    assert result.returncode == 1
    assert "c.yaml: error: cannot be rewritten (File too large)" in result.stderr
    assert (tmp_path / "c.yaml").read_text() == loose
    assert _leftovers(tmp_path) == []


def test_crlf_line_endings_and_a_byte_order_mark_are_kept(pf: Pf, tmp_path: Path) -> None:
    """A Windows checkout: only the lines whose layout changes differ."""
    crlf = LOOSE.replace("\n", "\r\n").encode()
    (tmp_path / "pool.yaml").write_bytes(b"\xef\xbb\xbf" + crlf)
    diff = pf("fmt", "--check", "--diff", tmp_path)
    assert diff.returncode == 3
    assert [line for line in diff.stdout.splitlines() if line.startswith(("-", "+"))][2:] == [
        "-    gpu: 4   # four",
        "+  gpu: 4     # four",
    ]
    assert pf("fmt", tmp_path).returncode == 0
    assert (tmp_path / "pool.yaml").read_bytes() == b"\xef\xbb\xbf" + LAID_OUT.replace(
        "\n", "\r\n"
    ).encode()
    again = pf("fmt", "--check", tmp_path)
    assert (again.returncode, again.stdout) == (0, "")


@pytest.mark.parametrize(
    ("raw", "laid_out"),
    [
        (
            b"kind:   Cluster\r\nname: c\nx:\n- a\r\n",
            b"kind: Cluster\r\nname: c\r\nx:\r\n  - a\r\n",
        ),
        (b"kind:   Cluster\nname: c\r\nx:\r\n- a\r\n", b"kind: Cluster\nname: c\nx:\n  - a\n"),
        (b"kind:   Cluster\rname: c\rx:\r- a\r", b"kind: Cluster\nname: c\nx:\n  - a\n"),
    ],
    ids=["crlf-first", "lf-first", "cr-only"],
)
def test_mixed_line_endings_follow_the_first_line(
    pf: Pf, tmp_path: Path, raw: bytes, laid_out: bytes
) -> None:
    """Old Mac files (CR alone) are not CRLF files: they come out LF, as before."""
    (tmp_path / "c.yaml").write_bytes(raw)
    assert pf("fmt", tmp_path).returncode == 0
    assert (tmp_path / "c.yaml").read_bytes() == laid_out
    assert pf("fmt", "--check", tmp_path).returncode == 0


@pytest.mark.parametrize(
    ("flags", "code", "listed", "written"),
    [
        (["-check=true"], 3, True, False),
        (["-check=false"], 0, True, True),
        (["-list=false"], 0, False, True),
        (["-write=false"], 0, True, False),
        (["-write=false", "-list=false", "-check=1"], 3, False, False),
        (["-diff=true", "-check"], 3, False, False),
        (["-recursive=false", "--list=true", "--write=true"], 0, True, True),
    ],
)
def test_terraform_fmt_switches_take_a_value(
    pf: Pf, tmp_path: Path, flags: list[str], code: int, listed: bool, written: bool
) -> None:
    (tmp_path / "pool.yaml").write_text(LOOSE)
    result = pf("fmt", *flags, tmp_path)
    assert result.returncode == code, result.stderr
    assert (str(tmp_path / "pool.yaml") in result.stdout.splitlines()) is listed
    assert (tmp_path / "pool.yaml").read_text() == (LAID_OUT if written else LOOSE)
    assert ("+  gpu: 4" in result.stdout) is ("-diff=true" in flags)


def test_a_switch_with_another_value_is_refused(pf: Pf, tmp_path: Path) -> None:
    (tmp_path / "pool.yaml").write_text(LOOSE)
    result = pf("fmt", "-write=maybe", tmp_path)
    assert result.returncode == 1
    assert "-write=maybe: -write takes true or false" in result.stderr
    assert (tmp_path / "pool.yaml").read_text() == LOOSE


@pytest.mark.parametrize("recursive", [["--recursive"], []], ids=["recursive", "alone"])
def test_a_dangling_link_given_is_named_as_one(
    pf: Pf, tmp_path: Path, recursive: list[str]
) -> None:
    (tmp_path / "config").symlink_to(tmp_path / "moved-away")
    result = pf("fmt", *recursive, tmp_path / "config")
    assert result.returncode == 1
    assert "is a symbolic link to" in result.stderr
    assert "which does not exist" in result.stderr
    assert "not a *.yaml" not in result.stderr


def test_a_file_too_large_to_lay_out_quickly_is_refused_by_name(pf: Pf, tmp_path: Path) -> None:
    """Laying out takes ruamel about 10 s a MiB: over 1 MiB fmt says so instead of seeming
    to hang; the other files are still laid out."""
    items = ", ".join(f"item{i}" for i in range(120_000))
    big = f"kind:   Cluster\nname: c\nx: [{items}]\n"
    (tmp_path / "big.yaml").write_text(big)
    (tmp_path / "pool.yaml").write_text(LOOSE)
    result = pf("fmt", tmp_path)
    assert result.returncode == 1
    size = len(big.encode())
    assert (
        f"big.yaml: error: it is {size} bytes ({size / (1 << 20):.2f} MiB); fmt lays out files "
        "of up to 1 MiB" in result.stderr
    )
    assert (tmp_path / "big.yaml").read_text() == big
    assert (tmp_path / "pool.yaml").read_text() == LAID_OUT


def test_a_file_that_would_grow_past_the_limit_is_left_alone(pf: Pf, tmp_path: Path) -> None:
    """Indented by one, laid out by two: 0.6 MiB would become 1.03 MiB, which the next
    `fmt --check` would refuse; it is refused now, so every run says the same."""
    depth = 60
    nested = "".join(" " * level + f"l{level}:\n" for level in range(depth))
    leaves = "".join(" " * depth + f"key{j:05}: value{j:05}\n" for j in range(7600))
    text = f"kind: Cluster\nname: c\n{nested}{leaves}"
    (tmp_path / "c.yaml").write_text(text)
    for _ in range(2):
        result = pf("fmt", tmp_path)
        assert result.returncode == 1
        assert "c.yaml: error: laid out it would be 1075452 bytes (1.03 MiB)" in result.stderr
        assert (tmp_path / "c.yaml").read_text() == text


def test_a_unicode_line_separator_cannot_make_fmt_change_a_file_for_ever(
    pf: Pf, tmp_path: Path
) -> None:
    """ruamel counts U+2028 as a line break: `x: 'a<U+2028>b'  # c` got its comment moved
    right on every run, so `fmt --check` never passed. Such a file is left alone, saying why;
    in a double-quoted string (escaped as \\L by the writer) it is laid out."""
    drifting = "kind:   Cluster\nname: c\nx: 'a\u2028b'  # c\n"
    (tmp_path / "c.yaml").write_text(drifting)
    (tmp_path / "d.yaml").write_text('kind:   Cluster\nname: d\nx: "a\u2028b"  # c\n')
    result = pf("fmt", tmp_path)
    assert result.returncode == 1
    assert "c.yaml: error: it holds a Unicode line or paragraph separator" in result.stderr
    assert (tmp_path / "c.yaml").read_text() == drifting
    assert (tmp_path / "d.yaml").read_text() == 'kind: Cluster\nname: d\nx: "a\\Lb" # c\n'
    assert pf("fmt", "--check", tmp_path / "d.yaml").returncode == 0


def test_fmt_never_writes_what_its_next_run_refuses(pf: Pf, tmp_path: Path) -> None:
    """A comment line inside a flow sequence: laid out once (`{a: 1}` as `a: 1`), the next run
    refused the file ("would lose a comment"), so `fmt --check` failed after `fmt`. It is left
    alone now, saying why, and every run says the same."""
    text = "kind: Cluster\nname: c\nx: [\n# own line\n    {a: 1}, b]\n"
    (tmp_path / "c.yaml").write_text(text)
    for _ in range(2):
        result = pf("fmt", tmp_path)
        assert result.returncode == 1
        assert "c.yaml: error: the YAML writer cannot lay it out stably" in result.stderr
        assert (tmp_path / "c.yaml").read_text() == text


def test_an_interrupted_write_puts_the_old_text_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C between writing the laid-out text and cutting the file to its length left a
    file half-done (a shorter text followed by the old one's tail): the old text is put back."""
    from reconciler.cli import fmt_writing

    path = tmp_path / "pool.yaml"
    path.write_text(LOOSE)
    truncate = os.ftruncate
    calls: list[int] = []

    def interrupted(fd: int, length: int) -> None:
        calls.append(length)
        if len(calls) == 1:
            raise KeyboardInterrupt
        truncate(fd, length)

    monkeypatch.setattr(fmt_writing.os, "ftruncate", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fmt_writing.rewrite_in_place(path, LAID_OUT, LOOSE.encode(), within=path.parent)
    assert path.read_text() == LOOSE
