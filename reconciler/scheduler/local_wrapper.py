"""The small program each local attempt runs under: a bash wrapper in a session of its own,
made the child subreaper of everything the job starts.

The wrapper:

1. claims the attempt by creating `claim/` (mkdir is atomic); if it exists the attempt was
   already run or fenced off by a restarted scheduler, and the wrapper exits without running;
2. writes its pid to `claim/pid`;
3. runs the job, waits for it (a trapped SIGTERM does not stop the wrapper, only the job);
4. kills every process the job left (SIGKILL), waits until none runs, then writes the exit
   status to `exit` (via a rename, so it is whole or absent) and kills its own group, itself
   included: what the job left running in the background (a data loader, a server holding
   GPU memory, a daemon) ends with it, as a container's processes end with its main process,
   so the capacity the job's end frees is free.

The processes the job left are found from /proc: the wrapper's descendants (by parent pid)
and the processes of its session. On Linux the wrapper is a child subreaper
(prctl(PR_SET_CHILD_SUBREAPER), set by a Python prelude that then executes bash: the setting
outlives execve): a process whose parent ends is given to the wrapper, not to init, so what
left the session (`setsid`, a double fork, `nohup setsid ... &`, a daemon) is still below it,
found and killed. Where the prctl is refused (not Linux, or a kernel before 3.4), the
wrapper runs as bash alone and only the session is found: a process that started a session
of its own and lost its parent escapes, as it did before the subreaper.

It runs with the jobs' base environment (job_environment.py); the job's envs (and
POOLFORM_*) are given to the job's own bash only (from `env`, NUL-separated): a job's `PATH`
without bash in it, or its `BASH_ENV`, must not stop the wrapper from starting, claiming or
recording the job. Its command line is `... -c PROGRAM poolform-job ATTEMPT NAME` (argv[3] and
argv[4]), prelude and bash alike: a restarted scheduler finds it by that.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping

ATTEMPT_DIR_VARIABLE = "POOLFORM_ATTEMPT_DIR"  # marks every process an attempt starts
PR_SET_CHILD_SUBREAPER = 36  # <linux/prctl.h>

WRAPPER = r"""
attempt=$1; name=$2; mask=$(umask); umask 077
mkdir "$attempt/claim" 2>/dev/null || exit 0
echo $$ > "$attempt/claim/pid.tmp" && mv "$attempt/claim/pid.tmp" "$attempt/claim/pid"
trap 'true' TERM INT HUP
command=$(cat "$attempt/command.sh")
envs=(); while IFS= read -r -d '' entry; do envs+=("$entry"); done < "$attempt/env"
(umask "$mask"; exec env -- "${envs[@]}" "$BASH" -c "$command" "$name") &
child=$!
wait "$child"; code=$?
while kill -0 "$child" 2>/dev/null; do wait "$child"; code=$?; done
find_left() {  # the running processes below the wrapper, or in its session (builtins only)
  local stat line rest pid queue kids=(); left=(); queue=($$)  # kids: by parent pid
  for stat in /proc/[0-9]*/stat; do
    { IFS= read -r line < "$stat"; } 2>/dev/null || continue
    rest=${line##*) }; rest=(${rest}); pid=${stat#/proc/}; pid=${pid%/stat}
    [ "${rest[0]}" = Z ] || [ "$pid" = $$ ] && continue
    kids[${rest[1]}]+=" $pid"
    [ "${rest[3]}" = $$ ] && left+=("$pid")
  done
  while [ ${#queue[@]} -gt 0 ]; do  # each parent once, whatever pids were reused meanwhile
    pid=${queue[0]}; rest=(${kids[$pid]}); unset "kids[$pid]"
    left+=("${rest[@]}"); queue=("${queue[@]:1}" "${rest[@]}")
  done
}
children=/proc/$$/task/$$/children
kill_children() {  # the wrapper's own children, each killed as soon as it is read
  # A process that forks and exits at once, again and again (a new pid each time, in a session
  # of its own), runs for less than a scan of /proc takes: never found by one, it outlived the
  # job. Its parent gone, each new one is the wrapper's child (the subreaper's): read from one
  # small file, the newest (last) first, until none of them runs (one killed is looked at
  # again until it is a zombie: only then were its own children given to the wrapper).
  # One gone meanwhile (reaped) had its children given to the wrapper first: looked again too.
  local kids tries=0 n kid line running
  [ -r "$children" ] || return 0
  while [ "$tries" -lt 2000 ]; do
    kids=(); read -r -a kids < "$children" 2>/dev/null; running=0
    for ((n = ${#kids[@]} - 1; n >= 0; n--)); do
      kid=${kids[n]}
      if ! kill -KILL "$kid" 2>/dev/null; then
        [ -e "/proc/$kid" ] || running=1; continue  # there still: not the wrapper's to signal
      fi
      { IFS= read -r line < "/proc/$kid/stat"; } 2>/dev/null || { running=1; continue; }
      line=${line##*) }; [ "${line%% *}" = Z ] || running=1
    done
    [ "$running" = 0 ] && return 0
    tries=$((tries + 1))
  done
}
# Until none runs: one killed in the middle of a fork leaves a child, found at the next pass; one
# in an uninterruptible sleep (a driver, a hung mount) still holds what it holds until it ends.
# Only what the wrapper may not signal (another user's, a set-uid program's) is left to run.
pass=0
while kill_children; find_left; [ ${#left[@]} -gt 0 ]; do
  signalled=0; for pid in "${left[@]}"; do kill -KILL "$pid" 2>/dev/null && signalled=1; done
  [ "$signalled" = 0 ] && break
  pass=$((pass + 1)); [ "$pass" -gt 8 ] && sleep 0.1
done
echo "$code" > "$attempt/exit.tmp" && mv "$attempt/exit.tmp" "$attempt/exit"
kill -KILL 0
"""

# Made the subreaper, then bash: a Python without ctypes, or a kernel that refuses the prctl,
# still runs the job (the wrapper then finds only its session, as on other systems).
PRELUDE = f"""import os, sys
try:
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl({PR_SET_CHILD_SUBREAPER}, 1, 0, 0, 0)
except Exception:
    pass
os.execv(sys.argv[-1], ["bash", "-c", {WRAPPER!r}] + sys.argv[1:-1])
"""


def wrapper_argv(attempt: str, name: str, environment: Mapping[str, str]) -> list[str]:
    """The command line of an attempt's wrapper. Its argv[3] and argv[4] are `poolform-job`
    and the attempt's directory whichever runs (the prelude, then bash): see wrapper_command.
    Bash is looked up on the wrapper's own PATH (a FileNotFoundError, as Popen raises, when it
    is not there)."""
    job_args = ["poolform-job", attempt, name]
    if not sys.platform.startswith("linux") or not sys.executable:
        return ["bash", "-c", WRAPPER, *job_args]
    bash = shutil.which("bash", path=environment.get("PATH"))
    if bash is None:
        raise FileNotFoundError(2, "No such file or directory", "bash")
    # -I: none of the environment's PYTHON* names nor the user's site; -S: no site at all.
    # Bash's path comes last, so argv[3] and argv[4] stay where bash will have them.
    return [sys.executable, "-ISc", PRELUDE, "poolform-job", attempt, name, bash]
