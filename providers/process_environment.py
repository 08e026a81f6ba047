"""The environment a process poolform starts for someone else's code begins from: a worker's
`setup` (the local provider) and a job (the scheduler: reconciler/scheduler/job_environment.py
gives jobs the same base).

Never poolform's whole environment: the user running `apply` (or the scheduler) holds its own
credentials (the team state's `POOLFORM_PG_URL` and `PGPASSWORD`, cloud keys such as
`AWS_SECRET_ACCESS_KEY`), which a `setup` script or a job would print in its log, hand to its
tools, or use to reach the state itself. As a cloud's worker boots with only what its launch
declares, Kubernetes gives a pod only the variables it declares and Slurm's `--export=NONE` a
job only its own, the process gets a small base a shell needs (the names below, from this
process's environment; HOME/USER/LOGNAME/SHELL from the account where it has none), the names
passed on by name, then what it declares itself (a pool's `envs` and `secrets`, a job's `envs`).

Here, in providers/, so that the providers (which never import the reconciler) and the
reconciler's scheduler share one definition; standard library only.
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
    """This process's own account, for the names a service manager (or `env -i`) may leave
    unset."""
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
    """The base of `environ` (a shell's names and those in `passed`), defaults filled in."""
    wanted = set(passed)
    base = {"PATH": DEFAULT_PATH, **_account()}
    for name, value in environ.items():
        if name in BASE_NAMES or name.startswith(BASE_PREFIXES) or name in wanted:
            base[name] = value
    return base
