"""The `poolform` command's entry point. It imports nothing of poolform before Ctrl-C is
handled: a Ctrl-C while the command is still starting ends it with exit 130 and
"interrupted", as at any later moment, never with a traceback of the imports."""

from __future__ import annotations

import contextlib
import sys

EXIT_INTERRUPTED = 130  # as reconciler/cli/common.py: 128 + SIGINT


def entrypoint() -> None:
    try:
        from reconciler.cli.main import entrypoint as run
    except KeyboardInterrupt as error:
        sys.stderr.write("error: interrupted\n")
        # With --json, stdout says it too (common.tell_json_error); if even that cannot be
        # imported now, stderr has said it.
        with contextlib.suppress(Exception, KeyboardInterrupt):
            from reconciler.cli.common import tell_json_error

            tell_json_error(sys.argv[1:], error)
        sys.exit(EXIT_INTERRUPTED)
    run()
