"""Numbers and durations on the command line are ASCII digits. Python's int() and float()
read any script's digits and underscores: `--lock-timeout` with an Arabic-Indic three waited
3 s, `--parallelism 1_0` ran 10 at once, `jobs show` with an Arabic-Indic one showed job 1.
Each such value is now refused naming its option, exit 1, nothing changed."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from reconciler.cli.main import cli
from reconciler.cli.numbers import Decimal, Integer
from tests.adversarial.conftest import Pf, tree_digest

ARABIC_THREE = "\u0663"
DEVANAGARI_THREE = "\u0969"
FULLWIDTH_THREE = "\uff13"

CASES = {
    "lock-timeout": (["plan", "--lock-timeout", ARABIC_THREE], "--lock-timeout"),
    "lock-timeout with unit": (["drift", "--lock-timeout", f"{FULLWIDTH_THREE}s"], "--lock-timeout"),
    "parallelism": (["apply", "--auto-approve", "--parallelism", DEVANAGARI_THREE], "'--parallelism'"),
    "parallelism underscore": (["apply", "--auto-approve", "--parallelism", "1_0"], "'--parallelism'"),
    "destroy parallelism": (["destroy", "--auto-approve", "--parallelism", ARABIC_THREE], "'--parallelism'"),
    "num-jobs": (["jobs", "submit", "JOB", "--num-jobs", ARABIC_THREE], "'--num-jobs'"),
    "priority": (["jobs", "submit", "JOB", "--priority", f"-{ARABIC_THREE}"], "'--priority'"),
    "job id": (["jobs", "show", "\u0661"], "'JOB_ID'"),
    "cancel grace": (["jobs", "cancel", "1", "--grace", ARABIC_THREE], "'--grace'"),
    "interval": (["scheduler", "run", "--once", "--interval", ARABIC_THREE], "'--interval'"),
    "grace": (["scheduler", "run", "--once", "--grace", f"{ARABIC_THREE}s"], "'--grace'"),
    "max-bypass": (["scheduler", "run", "--once", "--max-bypass", ARABIC_THREE], "'--max-bypass'"),
    "max-running": (["scheduler", "run", "--once", "--max-running", "1_0"], "'--max-running'"),
    "desired": (["local", "resize-group", "g", "--desired", ARABIC_THREE], "'--desired'"),
}  # fmt: skip


@pytest.mark.parametrize(("args", "option"), CASES.values(), ids=CASES.keys())
def test_a_number_not_in_ascii_digits_is_refused_naming_its_option(
    pf: Pf, quick: Path, args: list[str], option: str
) -> None:
    job = quick / "jobs" / "hello.yaml"
    before = tree_digest(quick)
    result = pf(*(str(job) if a == "JOB" else a for a in args), "--chdir", quick)
    assert result.returncode == 1, result.stderr
    assert option in result.stderr
    assert "internal error" not in result.stderr
    assert tree_digest(quick) == before


def test_ascii_numbers_are_read_as_before(pf: Pf, quick: Path) -> None:
    for timeout in ("0", "0.5", "2", " 3 ", "1m30s"):
        planned = pf("plan", quick, "--lock-timeout", timeout)
        assert planned.returncode == 0, (timeout, planned.stderr)
    assert pf("apply", quick, "--auto-approve", "--parallelism", "3").returncode == 0


def _numbers(group: click.Group, prefix: str = "") -> list[tuple[str, click.Parameter]]:
    found = []
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            found += _numbers(command, f"{prefix}{name} ")
        found += [(f"{prefix}{name}", param) for param in command.params]
    return found


def test_every_number_the_command_line_takes_is_read_as_ascii() -> None:
    """A new option typed `int` (or click.IntRange, click.FLOAT) would let any script's digits
    in again: every integer is numbers.Integer, every other number numbers.Decimal."""
    for command, param in _numbers(cli):
        if isinstance(param.type, click.types._NumberParamTypeBase):
            assert isinstance(param.type, Integer | Decimal), (command, param.name)
