"""The environment a job starts from, before its own `envs` and poolform's names.

Never the scheduler's whole environment: that holds the controller's secrets (the team
state's `POOLFORM_PG_URL` and `PGPASSWORD`, cloud keys such as `AWS_SECRET_ACCESS_KEY`),
which a job would print in its log, hand to its tools, or use to reach the queue's own
database. As Kubernetes (Kueue) gives a pod only the variables it declares and Slurm's
`--export=NONE` gives a job only its own, a job gets a small base a shell needs (the
names below, from the scheduler's environment, HOME/USER/LOGNAME/SHELL from the account
where the scheduler has none), the names an operator passes on by name (`scheduler run
--pass-env NAME`, as Slurm's `--export=NAME`), then its `envs` and poolform's.
"""

from __future__ import annotations

import os
import pwd
import re
from collections.abc import Iterable, Mapping

BASE_NAMES = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "TMPDIR", "SHELL", "TERM")
BASE_PREFIXES = ("LC_",)  # the locale's categories: LC_ALL, LC_CTYPE, ...
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _account() -> dict[str, str]:
    """The scheduler's own account, for the names a service manager may leave unset."""
    try:
        entry = pwd.getpwuid(os.getuid())
    except KeyError:  # a container's uid with no passwd line
        return {}
    return {
        "HOME": entry.pw_dir,
        "USER": entry.pw_name,
        "LOGNAME": entry.pw_name,
        "SHELL": entry.pw_shell or "/bin/sh",
    }


def base_environment(environ: Mapping[str, str], passed: Iterable[str] = ()) -> dict[str, str]:
    """What every job of this scheduler starts from (its poolform wrapper too, whose
    environment a job of the same user could read in /proc)."""
    wanted = set(passed)
    base = {"PATH": DEFAULT_PATH, **_account()}
    for name, value in environ.items():
        if name in BASE_NAMES or name.startswith(BASE_PREFIXES) or name in wanted:
            base[name] = value
    return base
