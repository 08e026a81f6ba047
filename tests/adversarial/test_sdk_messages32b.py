"""A cloud's or a state server's message that runs over several lines, shown as one diagnostic.

GCE answered a request with a message holding line breaks; `poolform plan` printed it as
`error: GCE 403: ...: Permission denied.` followed by lines of the server's own, one reading
`error: all capacity was deleted [forged]` and one `  hint: ...`, as poolform's own. libpq's
"connection refused" ends in a line `\\tIs the server running...`, which printed as a second line
beginning `\\t`; an apply's failure line showed every break as `\\n`. An SDK's or server's text is
now folded into one line where it is translated (providers/gcp/errors.py, providers/aws/
errors.py, the PostgreSQL and S3 backends); what still has a line break when the CLI reports
it (a local `setup`'s last log lines) continues on indented lines."""

from __future__ import annotations

import socket
from pathlib import Path

from botocore.parsers import ResponseParserError

from providers.aws.errors import from_status_message, translate
from providers.protocol import ErrorKind, ProviderError
from reconciler.cli.common import explain
from tests.adversarial.conftest import Pf
from tests.adversarial.gcp_endpoint import gcp
from tests.gcp.fake_cloud import FakeCloud, HttpFault

__all__ = ["gcp"]  # the fixture

FORGING = "Permission denied.\nerror: all capacity was deleted [forged]\n  hint: run `rm -rf ~`"
FOLDED = "Permission denied. error: all capacity was deleted [forged] hint: run `rm -rf ~`"


def lines_of_their_own(stderr: str) -> list[str]:
    """The lines that read as a diagnostic or hint of poolform's own."""
    return [line for line in stderr.splitlines() if line.startswith(("error:", "  hint:"))]


def test_a_gce_message_over_several_lines_is_one_error_line_of_plan(
    pf: Pf, gcp: tuple[Path, FakeCloud]
) -> None:
    config, cloud = gcp
    cloud.fail("regionInstanceGroupManagers.list", HttpFault(403, "forbidden", FORGING))

    run = pf("plan", config)

    assert run.returncode == 1
    (line,) = run.stderr.splitlines()
    assert line.startswith("error: GCE 403: GET ") and line.endswith(FOLDED)


def test_a_gce_message_over_several_lines_reads_as_one_line_in_a_failed_apply(
    pf: Pf, gcp: tuple[Path, FakeCloud]
) -> None:
    config, cloud = gcp
    assert pf("apply", config, "--auto-approve").returncode == 0
    cloud.fail("regionAutoscalers.patch", *[HttpFault(403, "forbidden", FORGING)] * 3)
    pools = config / "machine-pool.yaml"
    pools.write_text(pools.read_text().replace("size: 2", "size: 3"))

    run = pf("apply", config, "--auto-approve")

    assert run.returncode == 1
    failed = [line for line in run.stderr.splitlines() if line.startswith("  failed: ")]
    assert len(failed) == 3 and all(line.endswith(FOLDED) for line in failed), run.stderr
    assert "\\n" not in run.stdout + run.stderr


def closed_port() -> int:
    """A port nothing listens on: bound, never listened to, so connecting is refused."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    port: int = holder.getsockname()[1]
    holder.close()
    return port


def test_libpqs_two_line_connection_refusal_is_one_line_of_drift(pf: Pf, tmp_path: Path) -> None:
    dsn = f"postgresql://poolform:pw@127.0.0.1:{closed_port()}/postgres"
    (tmp_path / "c.yaml").write_text(
        "kind: Cluster\nname: team\nprovider: local\n"
        f"state: {{backend: postgres, dsn: '{dsn}', key: e32}}\n"
    )

    run = pf("drift", "--chdir", tmp_path)

    assert run.returncode == 1
    (line,) = run.stderr.splitlines()
    assert line.startswith("error: cannot connect to the PostgreSQL state at postgresql://")
    assert "Connection refused Is the server running" in line, line
    assert "pw@" not in line


def test_a_provider_message_with_line_breaks_continues_on_indented_lines() -> None:
    setup = "setup on worker w-1 exited 1; last lines of setup.log:\nerror: forged\n  hint: x"

    code, text = explain(ProviderError(ErrorKind.PERMANENT, setup, address="worker_pool.w"))

    assert code == 1
    assert lines_of_their_own(text) == [
        "error: worker_pool.w: setup on worker w-1 exited 1; last lines of setup.log:"
    ]
    assert text.splitlines()[1:] == ["    | error: forged", "    |   hint: x"]


def test_an_aws_scaling_activitys_message_and_a_garbled_response_are_one_line() -> None:
    status = "Launching a new EC2 instance.\nStatus Reason: InsufficientInstanceCapacity.\n\tRetry."
    error = from_status_message(status, None)
    assert error.kind is ErrorKind.CAPACITY and "\n" not in error.message
    assert "Launching a new EC2 instance. Status Reason: Insufficient" in error.message

    page = "<html>\n<head><title>502 Bad Gateway</title></head>\nerror: forged\n</html>"
    try:
        with translate("machine_pool.p"):
            raise ResponseParserError(f"Unable to parse response:\n{page}")
    except ProviderError as garbled:
        assert "\n" not in str(garbled) and "502 Bad Gateway error: forged" in str(garbled)
    else:
        raise AssertionError("not translated")


def test_a_failed_setups_last_log_lines_follow_its_failure_one_indented_line_each(
    pf: Pf, quick: Path
) -> None:
    pool = quick / "worker-pool.yaml"
    setup = "  echo 'pip install torch'; echo 'error: forged line'; exit 3\n"
    pool.write_text(pool.read_text().replace("  echo ready > setup.log\n", setup))

    run = pf("apply", quick, "--auto-approve")

    assert run.returncode == 1
    assert "\\n" not in run.stderr  # (the plan above shows the setup script, escaped)
    said = run.stderr.splitlines()
    at = next(i for i, line in enumerate(said) if line.startswith("  failed: worker_pool."))
    assert said[at].endswith("exited with status 3; last lines of setup.log:")
    assert said[at + 1 : at + 3] == ["      | pip install torch", "      | error: forged line"]
    assert not [line for line in said + run.stdout.splitlines() if line.startswith("error:")]
    live = run.stdout.splitlines()
    at = next(i for i, line in enumerate(live) if ": FAILED after " in line)
    assert live[at].endswith("last lines of setup.log:")
    assert live[at + 1 : at + 3] == ["    | pip install torch", "    | error: forged line"]
