"""`jobs`, `pools` and `scheduler`: submit and watch jobs, see pools, run the scheduler loop.

Parse, call a use case from reconciler.scheduler, render. Text for people, `--json` for tools
(the contract is reconciler/scheduler/jobs.schema.json). The `jobs` group and the output the
commands share are in shared.py; job_queue.py and job_cancel.py add the job commands to it.
"""

from __future__ import annotations

from reconciler.cli.scheduler_commands import job_cancel, job_queue
from reconciler.cli.scheduler_commands.pools_status import pools
from reconciler.cli.scheduler_commands.scheduler_run import scheduler
from reconciler.cli.scheduler_commands.shared import jobs

__all__ = ["job_cancel", "job_queue", "jobs", "pools", "scheduler"]
