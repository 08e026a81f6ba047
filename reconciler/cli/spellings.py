"""Terraform's spellings of the options poolform shares with it.

A Terraform user types `-out=plan.bin`, `-target=ADDR`, `-refresh=false`, `-chdir=DIR`; poolform's
own spellings are `--out`, `--target`, `--no-refresh`, `--chdir` (`state list -id=ID`: `--id`).
`terraform_spellings` rewrites the first into the second before click parses the command line,
for exactly the options both tools have (a single-dash word poolform does not know stays as it is, and click reports it).
`-lock=false` is `--no-lock` for the commands that read state under the lock (plan, drift,
graph), for credentials that may only read; the commands that read without any lock (`show`,
`state list|show|pull`) have nothing to leave out, so it is dropped there; for any other command
it is refused with the reason rather than ignored: a command that changes capacity always takes
the lock. `fmt` takes Terraform's switches
with a value too: `-check=true`, `-diff=false`, `-recursive=1`, `-list=false`, `-write=false`.
"""

from __future__ import annotations

from collections.abc import Sequence

from reconciler.errors import PoolformError

# Options poolform has under Terraform's name (with two dashes instead of one).
SHARED = frozenset(
    {
        "auto-approve",
        "chdir",
        "check",  # fmt
        "destroy",
        "detailed-exitcode",
        "diff",  # fmt
        "force",  # state push
        "json",
        "lock-timeout",
        "no-color",
        "out",
        "parallelism",
        "refresh",
        "recursive",  # fmt
        "refresh-only",
        "replace",
        "target",
    }
)
# ... and those only one command has (`-id` elsewhere stays as typed, and click reports it).
_SHARED_BY_ONE = frozenset({("id", "state list")})
BOOLEANS = {"true": True, "false": False, "1": True, "0": False}
# `terraform fmt`'s switches, each `-NAME`, `-NAME=true` or `-NAME=false` (poolform: --no-NAME).
FMT_SWITCHES = frozenset({"check", "diff", "recursive", "list", "write"})


def terraform_spellings(args: Sequence[str]) -> list[str]:
    """`args` with Terraform's single-dash spellings (and `-refresh=BOOL`, `-lock=BOOL`) in
    poolform's; everything after `--` is left alone."""
    rewritten: list[str] = []
    command = command_named(args)
    for index, arg in enumerate(args):
        if arg == "--":
            return rewritten + list(args[index:])
        rewritten.extend(_spelled(arg, command))
    return rewritten


# Options of the command group that take a value (the word after them is not the command).
_GROUP_VALUES = frozenset({"--chdir", "-chdir"})
READS_ONLY = frozenset({"plan", "drift", "graph"})
# Commands that read state without taking the lock at all (one consistent version, as
# state/protocol.py's readers give it): `-lock=false` asks for what they already do.
READS_WITHOUT_LOCK = frozenset({"show", "state list", "state show", "state pull"})
_GROUPS = frozenset({"state", "jobs", "pools", "scheduler"})


def command_named(args: Sequence[str]) -> str | None:
    """The command named (the first word that is neither an option nor an option's value),
    with its sub-command for a group (`state list`)."""
    skip = False
    words: list[str] = []
    for arg in args:
        if skip:
            skip = False
        elif arg in _GROUP_VALUES:
            skip = True
        elif not arg.startswith("-"):
            words.append(arg)
            if words[0] not in _GROUPS or len(words) == 2:
                break
    return " ".join(words) or None


def _spelled(arg: str, command: str | None) -> list[str]:
    if not arg.startswith("-") or arg == "-" or arg.startswith("---"):
        return [arg]
    name, has_value, value = arg.lstrip("-").partition("=")
    dashes = len(arg) - len(arg.lstrip("-"))
    if name == "lock":
        return _lock(arg, value if has_value else "true", command)
    if name == "refresh" and has_value:
        flag = BOOLEANS.get(value.lower())
        if flag is None:
            raise PoolformError(f"{arg}: -refresh takes true or false")
        return ["--refresh" if flag else "--no-refresh"]
    if command == "fmt" and name in FMT_SWITCHES and dashes <= 2:
        return [_fmt_switch(arg, name, value if has_value else "true")]
    if dashes == 1 and (name in SHARED or (name, command) in _SHARED_BY_ONE):
        return [f"--{arg[1:]}"]
    return [arg]


def _fmt_switch(arg: str, name: str, value: str) -> str:
    flag = BOOLEANS.get(value.lower())
    if flag is None:
        raise PoolformError(f"{arg}: -{name} takes true or false")
    return f"--{name}" if flag else f"--no-{name}"


def _lock(arg: str, value: str, command: str | None) -> list[str]:
    flag = BOOLEANS.get(value.lower())
    if flag is None:
        raise PoolformError(f"{arg}: -lock takes true or false")
    if flag:
        return []  # what poolform does by default
    if command in READS_ONLY:
        return ["--no-lock"]
    if command in READS_WITHOUT_LOCK:
        return []
    raise PoolformError(
        f"{arg} is not supported here: a command that changes state always takes the state "
        "lock, so that two runs can never change the same capacity at once",
        hint="to wait for a lock held by another run, pass --lock-timeout (e.g. 2m); to "
        "remove the lock of a run that is gone, use `poolform force-unlock ID`; plan, drift "
        "and graph, which only read, take --no-lock",
    )
