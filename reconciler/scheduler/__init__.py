"""The scheduler: queues, admits, runs and preempts jobs on the capacity apply built.

`schedule(snapshot, now)` decides (pure); the loop does the I/O around it; the store keeps
jobs, what they hold and their history; the executor runs their processes.
"""

from reconciler.scheduler.model import Decisions, Snapshot, Status
from reconciler.scheduler.schedule import schedule

__all__ = ["Decisions", "Snapshot", "Status", "schedule"]
