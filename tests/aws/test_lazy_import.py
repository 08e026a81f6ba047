"""The SDK is loaded only when a configuration chooses AWS."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import contextlib, io, sys
from reconciler.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(["--help"])
    except SystemExit:
        pass
import providers.registry
print(sorted(m for m in sys.modules if m.split(".")[0] in ("boto3", "botocore", "providers")))
"""


def test_help_does_not_import_the_sdk() -> None:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True
    ).stdout
    assert "botocore" not in out
    assert "providers.aws" not in out
