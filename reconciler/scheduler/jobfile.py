"""A job file (`kind: Job`) read as `validate` reads any document, and turned into a request.

Errors are the loader's: file:line:column, the rule, and a suggestion. The command line may
override the file's pool, subject, priority, preemptibility and number of jobs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from reconciler.checks import load_file
from reconciler.errors import Location, PoolformError
from reconciler.scheduler.amounts import Amounts, units
from reconciler.scheduler.applied import accelerator_names
from reconciler.scheduler.model import JobRequest
from schemas import Job
from schemas.quantities import parse_quantity


@dataclass(frozen=True)
class Overrides:
    pool: str | None = None
    subject: str | None = None
    num_jobs: int | None = None
    priority: int | None = None
    preemptible: bool | None = None


def load_job(path: Path) -> Job:
    if path.is_dir():
        raise PoolformError(f"{path} is a directory; give the job's YAML file")
    if not path.exists() and not path.is_symlink():  # a link that loops or dangles: named below
        raise PoolformError(f"{path}: no such file")
    configuration = load_file(path)
    documents = configuration.documents
    jobs = [d.model for d in documents if isinstance(d.model, Job)]
    others = [d for d in documents if not isinstance(d.model, Job)]
    if others:
        where = others[0].ref
        raise PoolformError(
            f"a job file holds one `kind: Job` document, not a {others[0].kind}",
            location=Location(where.file),
            hint="declare pools in the configuration and apply them; submit jobs separately",
        )
    if len(jobs) != 1:
        raise PoolformError(
            f"{path} holds {len(jobs)} Job documents; a job file holds exactly one",
            location=Location(str(path)),
        )
    return jobs[0]


# Every rank keeps its own copy of `run` and `envs` in the queue, and every job command and
# scheduler cycle reads the active jobs whole: 100,000 ranks of a 128 KiB script were 13 GB
# in the store and in the memory of each `jobs list`, `pools status` and cycle.
QUEUED_TEXT_LIMIT = 256 << 20


def check_queued_size(path: Path, job: Job, count: int) -> None:
    """Refuses a submit whose ranks would keep more than QUEUED_TEXT_LIMIT bytes of run and
    envs in the queue, before anything is written."""
    each = len(job.run.encode("utf-8")) + sum(
        len(name.encode("utf-8")) + len(value.encode("utf-8")) + 2
        for name, value in job.envs.items()
    )
    if count * each > QUEUED_TEXT_LIMIT:
        raise PoolformError(
            f"{count:,} jobs of {each:,} bytes of run and envs each would keep "
            f"{count * each / (1 << 20):,.0f} MiB in the queue; one submit keeps at most "
            f"{QUEUED_TEXT_LIMIT >> 20} MiB (every rank keeps its own copy, and every job "
            "command reads the queued jobs)",
            location=Location(str(path)),
            hint="put the script in a file the job runs (each rank reads POOLFORM_JOB_RANK), "
            "or submit fewer ranks at once",
        )


def _at_least(value: object) -> float:
    """SkyPilot's `4+` (at least 4) or a poolform quantity."""
    if isinstance(value, str) and value.strip().endswith("+"):
        return float(parse_quantity(value.strip()[:-1]))
    return float(parse_quantity(value))


def _memory(value: object) -> float:
    """Bytes; SkyPilot's `32+` means at least 32 GB."""
    if isinstance(value, str) and value.strip().endswith("+"):
        return float(parse_quantity(value.strip()[:-1] + "GB"))
    return float(parse_quantity(value))


def resources_of(job: Job) -> Amounts:
    spec = job.resources
    wanted: dict[str, int] = {}
    gpus = job.gpus_requested()
    if gpus:
        wanted["gpu"] = units(gpus)
    cpu = spec.cpu if spec.cpu is not None else spec.cpus
    if cpu is not None:
        wanted["cpu"] = units(_at_least(cpu))
    if spec.memory is not None:
        wanted["memory"] = units(_memory(spec.memory))
    for key, value in spec.custom.items():
        wanted[key] = units(value)
    return tuple(sorted((k, v) for k, v in wanted.items() if v))


def request_of(job: Job, overrides: Overrides) -> JobRequest:
    return JobRequest(
        pool=overrides.pool or job.pool or job.resources.resource_pool,
        subject=overrides.subject or job.subject,
        resources=resources_of(job),
        accelerators=accelerator_names(job.resources.accelerators),
        priority=overrides.priority if overrides.priority is not None else job.priority,
        preemptible=job.preemptible if overrides.preemptible is None else overrides.preemptible,
        instance_type=job.resources.instance_type,
        use_spot=job.resources.use_spot,
    )
