"""Saved plans (`plan -out FILE`): the plan plus what it was computed from, sealed by a checksum.

Applying a saved plan is safe only against the configuration and state it was made from. The
file records the configuration digest and the state's lineage and serial; `check_saved_plan`
refuses it when any moved on, and re-plans to prove the steps were not edited (plans are
deterministic, so an untouched plan re-computes byte for byte). It also carries what to re-read
before applying (reread.py): the objects the plan touches, by id, with their fingerprints.

Where the configuration is: the directory as given when planning (CI plans and applies from the
same checkout root in different jobs, at different absolute paths), that directory relative to
the plan file, and its absolute path; apply looks in that order, so a plan also applies from any
other working directory. A label (the pull request it was made for) and the commit it was made
at travel with it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.errors import PathNotFound, PoolformError
from reconciler.loading.sources import SUFFIXES
from reconciler.plan.model import Plan
from reconciler.plan.reread import Reread

MAGIC = "poolform-plan"
VERSION = 3  # 2: the objects to re-read before applying; 3: where, label and commit
READABLE = (2, 3)
# A plan is read whole: its checksum is over the parsed document (canonical JSON), so nothing
# vouches for a file before it is parsed, and parsing and checking it holds about three times
# its size at once. The largest plan the benchmarks make, 10,000 resources from an empty state
# (bench/bench_plan.py's configuration, `plan -out`), is 10.7 MB; a file more than 12 times
# that is no plan poolform wrote (a disk image named by mistake, or a forged plan: a 900 MB
# string in one took 2.8 GB and 10-20 s to be refused by its checksum), refused by its size
# before it is read. At the bound, a plan takes about 420 MB, as much as the 10,000-resource
# plan's budget (bench/README.md). `plan -out` refuses to save a plan above it, so a plan
# poolform saved is never one it then refuses to read.
MAX_PLAN_BYTES = 128 << 20
LARGEST_BENCH_PLAN = "10.7 MB for 10,000 resources"
# How much of a file tells whether it is meant as a plan: `kind` comes first (in a file an
# earlier poolform wrote with its keys sorted, after the directories: paths of a few KiB).
HEAD_BYTES = 64 * 1024


@dataclass(frozen=True)
class SavedPlan:
    plan: Plan
    directory: Path  # the configuration directory, as given when planning
    rereads: Reread | None  # None: planned with --no-refresh, nothing to re-read
    # Where to look for the configuration, in order: as given (from the working directory),
    # relative to the plan file, absolute as it was when planning.
    candidates: tuple[Path, ...] = ()
    label: str | None = None  # `plan --label`: what it was made for (e.g. a pull request)
    commit: str | None = None  # the commit the configuration was at, when known


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


def _sealed(envelope: dict[str, Any]) -> str:
    """The checksum over everything but itself."""
    return hashlib.sha256(
        _canonical({k: v for k, v in envelope.items() if k != "checksum"})
    ).hexdigest()


def write_plan(
    plan: Plan,
    path: Path,
    directory: Path,
    rereads: Reread | None = None,
    *,
    label: str | None = None,
    commit: str | None = None,
) -> None:
    """Save `plan` with where its configuration is (see the module's docstring)."""
    absolute = Path(os.path.abspath(directory))
    envelope: dict[str, Any] = {
        "kind": MAGIC,
        "version": VERSION,
        "directory": str(directory),
        "directory_from_plan_file": os.path.relpath(absolute, Path(os.path.abspath(path)).parent),
        "directory_absolute": str(absolute),
        "label": label,
        "commit": commit,
        "plan": plan.to_json(),
        "rereads": rereads.to_json() if rereads is not None else None,
    }
    envelope["checksum"] = _sealed(envelope)
    if not path.name or path.name in (".", ".."):
        raise PoolformError(f"-out {path!s}: the plan needs a file name")
    _refuse_to_overwrite(path)
    tmp: Path | None = None
    try:
        # A fresh name of its own (O_EXCL): a file or link already at a fixed temporary name
        # is never truncated or written through.
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        tmp = Path(name)
        with os.fdopen(fd, "w") as handle:
            # In the plan's own order (not sorted): `show FILE` then lists each change's
            # attributes as `plan` did, so the reviewed comment and the file read alike.
            json.dump(envelope, handle, indent=1)
            handle.write("\n")
        size = tmp.stat().st_size
        if size > MAX_PLAN_BYTES:
            tmp.unlink()
            raise PoolformError(
                f"-out {path}: this plan is {size:,} bytes, more than a saved plan may be "
                f"({MAX_PLAN_BYTES >> 20} MiB); nothing was saved",
                hint="plan part of the configuration at a time (--target ADDR), or apply "
                "without a saved plan",
            )
        os.replace(tmp, path)
    except OSError as exc:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)
        raise PoolformError(f"cannot save the plan to {path}: {exc.strerror or exc}") from None


def refuse_plan_among_configuration(path: Path, directory: Path) -> None:
    """`-out` naming a `*.yaml` / `*.yml` file in the configuration directory: the plan (JSON,
    which reads as YAML) would be one of the configuration's files, so the next plan, and the
    apply of this one, would stop on its `unknown kind poolform-plan`."""
    if not path.name.endswith(SUFFIXES):
        return
    try:
        among = os.path.samefile(path.parent, directory)
    except OSError:  # either is missing: the plan or the write says so
        return
    if among:
        raise PoolformError(
            f"-out {path}: a plan saved among the configuration's *.yaml / *.yml files would be "
            "read as one of them; nothing was saved",
            hint="save it outside the configuration directory, or under another name (plan.bin)",
        )


def _refuse_to_overwrite(path: Path) -> None:
    """`-out` replaces an earlier plan file (or an empty file), never anything else: a
    configuration's own YAML file or a user's file given by mistake is kept."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:  # nothing there (or a dangling link, which is replaced)
        return
    except OSError as exc:
        raise PoolformError(f"cannot save the plan to {path}: {exc.strerror or exc}") from None
    if size and not is_plan_file(path):
        raise PoolformError(
            f"-out {path}: a file is there that is not a poolform plan; it was left as it is",
            hint="name another file for the plan, or remove this one first",
        )


def is_plan_file(path: Path) -> bool:
    """Whether `path` is meant as a plan file: a JSON object naming itself a poolform plan
    (damage is found by `read_plan`). A configuration's YAML file is not one."""
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return False
    return head.lstrip().startswith(b"{") and f'"{MAGIC}"'.encode() in head


def read_plan(path: Path) -> SavedPlan:
    """The saved plan and the configuration directory it was made from."""
    if path.exists() and not path.is_file():
        # A device or a pipe (`show /dev/zero`) would be read without end.
        raise PoolformError(f"{path} is not a readable plan file: not a regular file")
    try:
        envelope = json.loads(_plan_text(path))
    except json.JSONDecodeError as exc:
        if exc.doc.lstrip().startswith("{"):
            raise PoolformError(
                f"{path} is not a readable plan file: damaged or cut short ({exc.msg} at line "
                f"{exc.lineno}, column {exc.colno})",
                hint="re-plan: run `poolform plan -out FILE` again",
            ) from None
        raise _not_json(path) from None
    except UnicodeDecodeError:
        raise _not_json(path) from None
    except FileNotFoundError:
        raise PathNotFound(str(path)) from None
    except OSError as exc:
        raise PoolformError(f"{path} is not a readable plan file: {exc}") from None
    except RecursionError:  # nesting no plan has: a hostile or damaged file
        raise PoolformError(f"{path} is not a readable plan file: nested too deeply") from None
    except MemoryError:  # below MAX_PLAN_BYTES, yet more than this process may hold
        raise PoolformError(
            f"{path} is too large to read as a plan here (out of memory)",
            hint="re-plan: run `poolform plan -out FILE` again",
        ) from None
    if not isinstance(envelope, dict) or envelope.get("kind") != MAGIC:
        raise _not_a_plan(path)
    version = envelope.get("version")
    if isinstance(version, int) and not isinstance(version, bool) and version > VERSION:
        # A CI runner with a newer release made it: re-planning here would plan with this
        # older poolform, which the reviewers did not see.
        raise PoolformError(
            f"{path} is plan format {version}, made by a newer poolform; this one reads "
            f"formats up to {VERSION}",
            hint="apply it with the poolform release that made it, or re-plan with this one "
            "(`poolform plan -out FILE`)",
        )
    if version not in READABLE:
        raise PoolformError(
            f"{path} is plan format {version}; this poolform reads {VERSION}",
            hint="re-plan: run `poolform plan -out FILE` again",
        )
    body = envelope.get("plan")
    if not isinstance(body, dict):
        raise PoolformError(f"{path} holds no plan")
    directory = str(envelope.get("directory", "."))
    reread = envelope.get("rereads")
    sealed = _sealed(envelope) if version == VERSION else _sealed_v2(directory, body, reread)
    if sealed != envelope.get("checksum"):
        raise PoolformError(
            f"{path} was modified after it was saved (checksum mismatch); refusing to use it",
            hint="re-plan: run `poolform plan -out FILE` again",
        )
    try:
        rereads = Reread.from_json(reread) if isinstance(reread, list) else None
        return SavedPlan(
            Plan.from_json(body),
            Path(directory),
            rereads,
            candidates=_candidates(path, directory, envelope),
            label=_text_or_none(envelope.get("label")),
            commit=_text_or_none(envelope.get("commit")),
        )
    except (KeyError, TypeError, ValueError, AssertionError, AttributeError) as exc:
        # AttributeError: a part of the wrong shape (a string or null where a change is)
        raise PoolformError(f"{path} is not a valid plan: {exc}") from None


def _plan_text(path: Path) -> str:
    """The file's text, once its size and its first bytes show it may be a plan: a large file
    that is not one (`show backup.tar`) is refused without being read whole."""
    with path.open("rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        head = handle.read(HEAD_BYTES)
        if size > len(head) and not head.lstrip().startswith(b"{"):
            raise _not_a_plan(path)  # (a small one is parsed, to say what it is)
        if size > MAX_PLAN_BYTES:
            raise PoolformError(
                f"{path} is not a readable plan file: it is {size:,} bytes, and plans are "
                f"limited to {MAX_PLAN_BYTES >> 20} MiB (poolform's largest benchmarked plan "
                f"is {LARGEST_BENCH_PLAN}); nothing was read or changed",
                hint="re-plan: run `poolform plan -out FILE` again",
            )
        return (head + handle.read()).decode()


def _not_a_plan(path: Path) -> PoolformError:
    return PoolformError(
        f"{path} is not a poolform plan file", hint="create one with `poolform plan -out FILE`"
    )


def _not_json(path: Path) -> PoolformError:
    # A configuration's YAML file, most often (`show cluster.yaml`): no JSON parser's words.
    return PoolformError(
        f"{path} is not a poolform plan file (not JSON)",
        hint="create one with `poolform plan -out FILE`",
    )


def _sealed_v2(directory: str, body: Any, reread: Any) -> str:
    return hashlib.sha256(_canonical([directory, body, reread])).hexdigest()


def _text_or_none(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise ValueError(f"expected text, found {type(value).__name__}")


def _candidates(path: Path, directory: str, envelope: dict[str, Any]) -> tuple[Path, ...]:
    found = [Path(directory)]
    beside = envelope.get("directory_from_plan_file")
    if isinstance(beside, str):
        found.append(Path(os.path.abspath(path)).parent / beside)
    absolute = envelope.get("directory_absolute")
    if isinstance(absolute, str):
        found.append(Path(absolute))
    unique: dict[str, Path] = {}
    for candidate in found:
        unique.setdefault(os.path.normpath(os.path.abspath(candidate)), candidate)
    return tuple(unique.values())


def check_saved_plan(
    saved: Plan, config_digest: str, lineage: str, serial: int, replanned: Plan
) -> None:
    """Refuse a saved plan that no longer describes what apply would do."""
    check_saved_origin(saved, config_digest, lineage, serial)
    if _canonical(_steps(saved)) != _canonical(_steps(replanned)):
        raise PoolformError(
            "the saved plan's steps differ from what this configuration and state produce "
            "(a `${env:...}` value it read is another now, or it was edited or made by another "
            "poolform version); nothing was applied",
            hint="re-plan: run `poolform plan -out FILE` again",
        )


def _steps(plan: Plan) -> dict[str, Any]:
    """What a plan does, without how its files were named: the configuration may be loaded
    through another path than when planning (another working directory), which changes the
    file names in `source` and in warnings, never a step."""
    body = plan.to_json()
    body.pop("warnings")
    body["changes"] = [{k: v for k, v in c.items() if k != "source"} for c in body["changes"]]
    return body


def check_saved_origin(saved: Plan, config_digest: str, lineage: str, serial: int) -> None:
    """Refuse a saved plan made from another state or configuration than the current ones."""
    if saved.lineage != lineage and serial == 0 and saved.serial > 0:
        raise PoolformError(
            f"this plan was made for a state (lineage {saved.lineage}, serial {saved.serial}) "
            "and there is no state here: nothing was applied from this configuration yet, or its "
            "state was removed; nothing was applied",
            hint="if it was removed by mistake, put it back (the backend's copy, or `poolform "
            "state push` of a `state pull`); `poolform plan` says what the cloud still holds "
            "under its lineage",
        )
    if saved.lineage != lineage:
        raise PoolformError(
            f"this plan was made for a different state (lineage {saved.lineage}, this state is "
            f"{lineage}); nothing was applied",
            hint="re-plan against this configuration's state: run `poolform plan -out FILE` again",
        )
    if saved.serial != serial:
        raise PoolformError(
            f"the state changed since this plan was made (serial {saved.serial}, now {serial}): "
            "the plan is stale and nothing was applied; re-plan",
            hint="run `poolform plan -out FILE` again and review the new plan",
        )
    if saved.config_digest != config_digest:
        raise PoolformError(
            "the configuration changed since this plan was made: the plan is stale and nothing "
            "was applied; re-plan",
            hint="run `poolform plan -out FILE` again and review the new plan",
        )
