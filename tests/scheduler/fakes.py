"""A fake executor over a fake world of processes that outlive any scheduler, with a clock.

The world remembers every attempt ever started, so a test can see a job run twice or two
processes of one job at once; processes end when the test says, or when signalled.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from reconciler.scheduler.executor import Launch, Observation, Phase


class Clock:
    def __init__(self, now: float = 1_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class Process:
    job: int
    attempt: int
    pid: int
    launch: Launch
    exit_code: int | None = None
    vanished: bool = False
    stubborn: bool = False  # ignores SIGTERM (only SIGKILL ends it)

    @property
    def running(self) -> bool:
        return self.exit_code is None and not self.vanished


@dataclass
class World:
    processes: dict[tuple[int, int], Process] = field(default_factory=dict)
    fenced: set[tuple[int, int]] = field(default_factory=set)
    next_pid: int = 100
    starts: list[tuple[int, int]] = field(default_factory=list)

    def running(self) -> list[Process]:
        return [p for p in self.processes.values() if p.running]


class CrashBeforeStart(Exception):
    """The scheduler dies (kill -9) just before starting a process."""


class FakeExecutor:
    def __init__(self, world: World, crash_after: int | None = None):
        self.world = world
        self.crash_after = crash_after  # starts allowed before the simulated crash

    def start(self, launch: Launch) -> int:
        key = (launch.job, launch.attempt)
        if self.crash_after is not None:
            if self.crash_after == 0:
                raise CrashBeforeStart
            self.crash_after -= 1
        assert key not in self.world.processes, f"attempt {key} started twice"
        assert key not in self.world.fenced, f"attempt {key} started after it was fenced"
        self.world.next_pid += 1
        self.world.processes[key] = Process(launch.job, launch.attempt, self.world.next_pid, launch)
        self.world.starts.append(key)
        return self.world.next_pid

    def observe(self, job: int, attempt: int, *, fence: bool = False) -> Observation:
        process = self.world.processes.get((job, attempt))
        if process is None:
            if fence:
                self.world.fenced.add((job, attempt))
            return Observation(Phase.NOT_STARTED)
        if process.exit_code is not None:
            return Observation(Phase.EXITED, process.pid, process.exit_code)
        if process.vanished:
            return Observation(Phase.VANISHED, process.pid)
        return Observation(Phase.RUNNING, process.pid)

    def signal(self, job: int, attempt: int, pid: int, *, kill: bool) -> None:
        process = self.world.processes.get((job, attempt))
        if process is None or not process.running:
            return
        if kill:
            process.vanished = True
        elif not process.stubborn:
            process.exit_code = 143

    def log_path(self, job: int) -> Path | None:
        return None
