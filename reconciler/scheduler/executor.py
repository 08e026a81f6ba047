"""The executor Protocol: start a job's process, signal it, and see how it is doing.

An attempt is one run of a job (a preempted job runs again as its next attempt). Executors
must make `start` safe against a scheduler that dies at any moment: an attempt runs at most
once, and whether it started, runs or ended can be learned later by a new scheduler process
from the attempt alone (`observe`), even for a pid it never recorded.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable


@dataclass(frozen=True)
class Launch:
    job: int
    attempt: int
    name: str
    run: str
    env: Mapping[str, str]
    workdir: Path | None  # a worker's directory; None: the job's own directory


@dataclass(frozen=True)
class Place:
    """Where an attempt runs: a host and the jobs directory its processes and exit files are
    under. Only an executor at the same place can see, signal or fence the attempt; anywhere
    else its processes and files are out of sight (another machine, or another directory)."""

    host: str  # a stable identity ("machine-id:...", "hostname:..." or POOLFORM_HOST_ID)
    host_name: str  # the host's name, for people
    jobs_dir: str  # resolved

    def same(self, other: Place) -> bool:
        """The same place: the name is only for people (a host renamed is still itself)."""
        return (self.host, self.jobs_dir) == (other.host, other.jobs_dir)

    def describe(self) -> str:
        if not self.host_name or self.host == f"hostname:{self.host_name}":
            named = self.host_name or self.host
        else:
            named = f"{self.host_name} ({self.host})"
        return f"host {named} under {self.jobs_dir}"


@runtime_checkable
class Placed(Protocol):
    """An executor whose attempts are visible only at its own place (LocalExecutor). One
    without a place (a fake, a cluster manager) sees its attempts from anywhere."""

    @property
    def place(self) -> Place: ...


class Phase(enum.Enum):
    NOT_STARTED = "not_started"  # no process ever ran this attempt (and now none will)
    RUNNING = "running"
    EXITED = "exited"  # ended and recorded its exit status
    VANISHED = "vanished"  # started, gone, no exit status (killed, or its machine rebooted)


@dataclass(frozen=True)
class Process:
    """An attempt's process as the store keeps it: the pid of its group leader, and when that
    pid started (the kernel's start time; None where unknown), so a pid reused by another
    process is never taken for it."""

    pid: int
    since: int | None = None


@dataclass(frozen=True)
class Observation:
    phase: Phase
    pid: int | None = None
    exit_code: int | None = None


class Executor(Protocol):
    def start(self, launch: Launch) -> int:
        """Start the attempt's process; returns its pid (the process group leader)."""
        ...

    def observe(self, job: int, attempt: int, *, fence: bool = False) -> Observation:
        """How the attempt is doing. With `fence`, an attempt that has not started is marked
        so it never will (a launch that was in flight when a scheduler died)."""
        ...

    def signal(self, job: int, attempt: int, pid: int, *, kill: bool) -> None:
        """SIGTERM (or SIGKILL) to the attempt's whole process group; no error if gone."""
        ...

    def log_path(self, job: int) -> Path | None:
        """Where the job's output is captured (None: this executor keeps no log file)."""
        ...


@runtime_checkable
class Tracked(Protocol):
    """An executor whose own marks of an attempt the job can remove (LocalExecutor: the
    attempt directory belongs to the job's user, who may delete or replace it). The store
    keeps each started attempt's `Process` too, and `observe` is given it: an attempt whose
    process the store recorded is never taken for one that did not start, and is seen as
    running while that process (or its group) runs, whatever became of the directory."""

    def identify(self, pid: int) -> Process:
        """The process running as `pid` now, with its start time where it can be read."""
        ...

    def observe(
        self, job: int, attempt: int, *, fence: bool = False, process: Process | None = None
    ) -> Observation: ...
