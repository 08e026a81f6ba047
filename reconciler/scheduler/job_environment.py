"""The environment a job starts from, before its own `envs` and poolform's names: the base
every process poolform starts for someone else's code gets (providers/process_environment.py,
shared with the local provider's worker `setup`), plus the names an operator passes on by
name (`scheduler run --pass-env NAME`, as Slurm's `--export=NAME`).

Never the scheduler's whole environment: that holds the controller's secrets (the team
state's `POOLFORM_PG_URL` and `PGPASSWORD`, cloud keys such as `AWS_SECRET_ACCESS_KEY`),
which a job would print in its log, hand to its tools, or use to reach the queue's own
database. The base is given to the job's poolform wrapper too, whose environment a job of
the same user could read in /proc.
"""

from __future__ import annotations

from providers.process_environment import (
    BASE_NAMES,
    BASE_PREFIXES,
    DEFAULT_PATH,
    ENV_NAME,
    base_environment,
)

__all__ = ["BASE_NAMES", "BASE_PREFIXES", "DEFAULT_PATH", "ENV_NAME", "base_environment"]
