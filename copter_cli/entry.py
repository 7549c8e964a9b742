"""The ``copter`` console script's entry point (and ``python -m copter_cli``'s): it installs a SIGINT handler
before anything heavy is imported, so an interrupt at any moment ends the process cleanly.

Until :func:`copter_cli.app.main` starts parsing, nothing has been read or written: an interrupt prints
the interrupted error (``{"error": {"code": 130, "kind": "interrupted", ...}}`` on stdout with ``--json``,
one line on stderr) and exits 130 at once, instead of a traceback from the middle of an import. From then
on SIGINT raises KeyboardInterrupt as usual, which every command maps to exit 130 after its cleanup (the
state is unchanged). Only the few milliseconds in which the interpreter itself starts, before this module
runs, keep Python's default behaviour.
"""

from __future__ import annotations

import os
import signal
import sys

MESSAGE = "interrupted while starting; nothing was done"


def _interrupted_at_start(signum, frame) -> None:
    """SIGINT before the command runs: print the interrupted error and exit 130 (nothing to clean up)."""
    try:
        if "--json" in sys.argv[1:]:
            import json

            err = {"error": {"code": 130, "kind": "interrupted", "message": MESSAGE}}
            os.write(1, (json.dumps(err) + "\n").encode())
        os.write(2, f"error (interrupted, exit 130): {MESSAGE}\n".encode())
    except OSError:
        pass
    os._exit(130)


def install() -> None:
    """Install the start-up SIGINT handler (main thread only; a no-op elsewhere)."""
    try:
        signal.signal(signal.SIGINT, _interrupted_at_start)
    except ValueError:  # not the main thread
        pass


def release() -> None:
    """From here SIGINT raises KeyboardInterrupt again (the commands clean up and exit 130); only when the
    start-up handler is the one installed, so a host process's own handler is left alone."""
    if signal.getsignal(signal.SIGINT) is _interrupted_at_start:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def keep_pandas_out() -> None:
    """Make pandas unimportable in the CLI's process. The CLI never uses pandas, but pyarrow's pandas shim
    imports it on its first conversion of a Python list or a string array whenever it is installed, which
    cost 0.5-1 s of every ``copter step`` on a machine with pandas (measured with ``python -X importtime``).
    A library user's process is left alone."""
    if "pandas" not in sys.modules:
        sys.modules["pandas"] = None  # type: ignore[assignment]  # import pandas -> ImportError


def main() -> None:
    """Console-script entry: install the handler, keep pandas out, then import and run
    :func:`copter_cli.app.main`."""
    install()
    keep_pandas_out()
    if os.environ.get("COPTER_FAULT_INJECT") == "sigint_at_start":  # tests: an interrupt during the imports
        os.kill(os.getpid(), signal.SIGINT)
    from copter_cli.app import main as app_main

    app_main()


if __name__ == "__main__":
    main()
