"""Job: a workload submitted to the scheduler, not declared in the configuration.

Accepts SkyPilot job YAML (resources, run) and ZenML-style requests (resource keys, preemptible,
subject). A job never carries setup, workdir or file mounts: workers are prepared by their pool.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AfterValidator, Field, field_validator

from schemas.accelerators import Accelerators, accelerator_count
from schemas.base import NAME_PATTERN, Document, Strict
from schemas.quantities import MAX_QUANTITY, Quantity, parse_quantity
from schemas.resource_pool import RESOURCE_KEY, STANDARD_KEYS
from schemas.subject_policy import SUBJECT_MAX_LENGTH

_WORKER_ONLY = ("setup", "workdir", "file_mounts", "storage_mounts")
_AT_LEAST = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*\+\s*$")
# The scheduler counts in thousandths (reconciler/scheduler/amounts.py): a smaller non-zero
# amount would round to nothing and the job would run without what it asked for.
_FINEST = 0.001
# One argument or environment entry of an exec may hold at most this many bytes (Linux's
# MAX_ARG_STRLEN, 32 pages); `run` is one argument of `bash -c`.
_MAX_ARGUMENT_BYTES = 131_072 - 1
# All of a job's envs together: well under the kernel's limit on an exec's arguments and
# environment (a quarter of the 8 MiB default stack), leaving room for the scheduler's own.
_MAX_ENVS_BYTES = 1 << 20
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# What the scheduler sets in every job's environment (its id, rank, attempt, place): a job's own
# value under one of these names would be overwritten without a word, so it is refused.
RESERVED_ENVS = frozenset(
    {
        "POOLFORM_JOB_ID", "POOLFORM_JOB_NAME", "POOLFORM_JOB_RANK", "POOLFORM_NUM_JOBS",
        "POOLFORM_ATTEMPT", "POOLFORM_POOL", "POOLFORM_WORKER_ID", "POOLFORM_WORKDIR", "PWD",
        "POOLFORM_ATTEMPT_DIR",
        "SKYPILOT_JOB_RANK", "SKYPILOT_NUM_JOBS",
    }
)  # fmt: skip


def _at_least(unit: str) -> Any:
    """SkyPilot's `4+` (at least 4, in `unit`): the number must be a quantity too."""

    def check(value: Any) -> Any:
        if isinstance(value, str):
            match = _AT_LEAST.match(value)
            parse_quantity(match.group(1) + unit if match else value)
        return value

    return AfterValidator(check)


def _countable(value: int | float) -> int | float:
    if 0 < value < _FINEST:
        raise ValueError(f"{value:g} is finer than the scheduler counts (0.001)")
    return value


Countable = Annotated[Quantity, AfterValidator(_countable)]
AtLeastCores = Annotated[Quantity | str, _at_least("")]
AtLeastGigabytes = Annotated[Quantity | str, _at_least("GB")]


def _fits_one_argument(value: str, what: str) -> None:
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > _MAX_ARGUMENT_BYTES:
        raise ValueError(
            f"{what} is {size:,} bytes; a process argument holds at most "
            f"{_MAX_ARGUMENT_BYTES:,} (put a long script in a file the job runs)"
        )


class JobResources(Strict):
    accelerators: Accelerators = Field(
        None, description="`H100:1`, or alternatives such as {H100: 1, H200: 1}."
    )
    gpu: Countable | None = None
    cpu: Countable | None = None
    cpus: AtLeastCores | None = None
    memory: AtLeastGigabytes | None = Field(
        None, description="Bytes (`8GB`, `16Gi`); SkyPilot's `32+`: GB."
    )
    custom: dict[str, Countable] = Field(
        default_factory=dict, description="Custom resource keys a pool declares (licenses, ...)."
    )
    instance_type: str | None = None
    use_spot: bool | None = None
    resource_pool: str | None = Field(
        None, pattern=NAME_PATTERN, description="Determined's way to name the pool."
    )

    @field_validator("instance_type")
    @classmethod
    def _one_word(cls, value: str | None) -> str | None:
        # A cloud's type name (c5.xlarge, n1-standard-8, Standard_NC24ads_A100_v4) is one word
        # of printable ASCII. An empty or spaced one was matched against no pool's type, and
        # the job rejected with "instance type  asked"; a line break was printed as `\n`.
        if value is not None and (not value or not all("!" <= c <= "~" for c in value)):
            raise ValueError(
                f"{value[:60]!r} is not an instance type: one word of printable ASCII, "
                "such as c5.xlarge"
            )
        return value

    @field_validator("custom")
    @classmethod
    def _custom_keys(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key in value:
            if not re.match(RESOURCE_KEY, key):
                raise ValueError(f"{key!r} is not a resource key (lower case, digits, . _ -)")
            if key in STANDARD_KEYS or key == "worker":
                raise ValueError(
                    f"`{key}` is not a custom key"
                    + (
                        "; every job takes one step_run"
                        if key == "step_run"
                        else f"; write resources.{key}"
                    )
                )
        return value

    @field_validator("accelerators")
    @classmethod
    def _accelerators_count(cls, value: Any) -> Any:
        if accelerator_count(value) > MAX_QUANTITY:
            raise ValueError("more accelerators than any real pool (limit 10^18)")
        return value


class Job(Document):
    kind: Literal["Job"] = "Job"
    declarative: ClassVar[bool] = False
    resources: JobResources = Field(default_factory=JobResources)
    run: str = Field(min_length=1, description="The command, run in the worker's directory.")
    pool: str | None = Field(None, pattern=NAME_PATTERN)
    subject: str | None = Field(None, min_length=1, max_length=SUBJECT_MAX_LENGTH)
    priority: int | None = Field(
        None, ge=-1_000_000, le=1_000_000, description="Higher wins; default: its policy's."
    )
    preemptible: bool = True
    retries: int = Field(0, ge=0, le=100)
    num_jobs: int = Field(1, ge=1, le=100_000)
    envs: dict[str, str] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)

    field_hints: ClassVar[dict[str, str]] = {
        key: "a job cannot prepare its worker; put it in the pool's setup" for key in _WORKER_ONLY
    }

    @field_validator("run")
    @classmethod
    def _run_fits(cls, value: str) -> str:
        _fits_one_argument(value, "run")
        return value

    @field_validator("envs")
    @classmethod
    def _env_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            if not _ENV_NAME.match(name):
                raise ValueError(
                    f"{name!r} is not an environment variable name (letters, digits and _, "
                    "not starting with a digit)"
                )
            if name in RESERVED_ENVS:
                raise ValueError(
                    f"{name} is set by poolform in every job's environment; name yours otherwise"
                )
            _fits_one_argument(f"{name}={text}", f"envs.{name}")
        size = sum(len(f"{n}={t}".encode("utf-8", "surrogatepass")) + 1 for n, t in value.items())
        if size > _MAX_ENVS_BYTES:
            raise ValueError(f"envs hold {size:,} bytes; at most {_MAX_ENVS_BYTES:,} in all")
        return value

    def gpus_requested(self) -> float:
        """GPUs per job, from `gpu` or from the accelerator spec (the largest alternative)."""
        if self.resources.gpu is not None:
            return float(self.resources.gpu)
        return float(accelerator_count(self.resources.accelerators))

    def references(self) -> list[tuple[tuple[str | int, ...], str, str]]:
        pool = self.pool or self.resources.resource_pool
        path: tuple[str | int, ...] = ("pool",) if self.pool else ("resources", "resource_pool")
        return [(path, "pool", pool)] if pool else []
