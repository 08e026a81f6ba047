"""`jobs logs` of a job whose `output.log` was replaced by a directory ended with "internal
error: IsADirectoryError" (the file was opened, then handed to fdopen, which refuses a
directory, before its kind was checked). It is now refused like a symlink or a FIFO there:
exit 1, the file named, with or without --follow."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adversarial.scheduler_setup import refused
from tests.adversarial.test_scheduler_logs import _finished
from tests.scenario.installed import poolform


@pytest.mark.parametrize("follow", [(), ("--follow",)], ids=["once", "follow"])
def test_a_log_replaced_by_a_directory_is_refused(tmp_path: Path, follow: tuple[str, ...]) -> None:
    directory, log = _finished(tmp_path)
    log.unlink()
    log.mkdir()
    result = poolform("jobs", "logs", "1", *follow, "--chdir", directory)
    refused(result, "output.log is not the job's own log file", "a directory")
