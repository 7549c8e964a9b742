"""Where the public data lives for the examples: ``$COPTER_DATA``, else ``../shared/data`` beside the repository."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from solver.model.errors import InputError

REPO = Path(__file__).resolve().parents[1]


def _one_line_faults(hook=sys.excepthook):
    """The generators' excepthook: numba's "no locator available" at a kernel module's import (the scripts import
    the workloads at their top, before :func:`generator_main` runs) is copter's one exit-7 line, as the CLI says it
    (``formats.faults.kernel_cache_fault``), not a traceback and exit 1 (helper-234, session 58)."""
    def excepthook(kind, err, tb):
        from formats.faults import kernel_cache_fault

        fault = kernel_cache_fault(err)
        if fault is None:
            return hook(kind, err, tb)
        print(f"error: {fault}", file=sys.stderr, flush=True)
        os._exit(7)  # copter's code of an environment fault (copter_cli.exit_codes.ENVIRONMENT)
    return excepthook


sys.excepthook = _one_line_faults()


def data_dir() -> Path:
    """The data directory (it may not exist: callers report that with :func:`require`)."""
    env = os.environ.get("COPTER_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


def require(sub: str) -> Path:
    """``data_dir() / sub``.

    Raises:
        InputError: the path does not exist (names it and says how to point at the data).
    """
    p = data_dir() / sub
    if not p.exists():
        env = os.environ.get("COPTER_DATA")
        where = f"$COPTER_DATA is {env}" if env else f"$COPTER_DATA is unset, so {data_dir()} was tried"
        raise InputError(f"example data not found ({where}); set COPTER_DATA to the shared data folder",
                         file=str(p))
    return p


def generator_main(doc: str, add_arguments, build, argv=None) -> int:
    """Shared command line of the ``examples/<domain>/generate.py`` scripts.

    Adds the common options (``--out``, ``--rounds``, ``--mps``, ``--seed``), lets the domain add its own
    with ``add_arguments(parser)``, builds the scenario with ``build(args)`` and writes
    ``base.parquet`` (or ``base.mps``) plus ``delta_0001.parquet ...`` into ``--out``.

    Returns:
        The process exit code: 0, or copter's code of an error (3: the data is not found, named with how to
        point at it), printed as one ``error:`` line on stderr instead of a traceback.
    """
    import argparse
    import sys
    import time

    from copter_cli.cmd_demo import write_stream
    from copter_cli.exit_codes import for_error
    from solver.model.errors import CopterError

    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output folder (refused while it holds delta files beyond "
                                                 "--rounds or a base of the other format: another stream's)")
    ap.add_argument("--rounds", type=count(0), default=10, help="number of deltas (default 10)")
    add_arguments(ap)
    ap.add_argument("--mps", action="store_true", help="write base.mps instead of base.parquet")
    ap.add_argument("--seed", type=count(0), default=0, help="random seed (default 0)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    if out.exists() and not out.is_dir():  # helper-238: a FileExistsError traceback
        ap.error(f"--out {args.out} is a file, not a folder")
    stale = other_streams_files(out, args.rounds, "base.mps" if args.mps else "base.parquet")
    if stale:  # refused before anything is written; never deleted: they may be a user's own stream
        shown = ", ".join(stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
        ap.error(f"--out {args.out} holds files of another stream ({shown}), which `copter step "
                 f"{args.out}/delta_*.parquet` would take as rounds of this one: remove them or choose another folder")
    t = time.perf_counter()
    try:
        paths = write_stream(build(args), args.out, args.rounds, "base.mps" if args.mps else "base.parquet")
    except CopterError as err:  # e.g. the data is not where $COPTER_DATA says: one line, no traceback
        print(f"error: {err}", file=sys.stderr)
        return for_error(err)
    except KeyboardInterrupt:  # Ctrl-C: one line (each file is written whole or not at all), 130 as copter's
        print(f"error: interrupted; {args.out} may hold part of the stream (run again to write it whole)",
              file=sys.stderr)
        return 130
    print(f"wrote {len(paths)} file{'' if len(paths) == 1 else 's'} to {args.out} in {time.perf_counter() - t:.2f} s", file=sys.stderr)
    return 0


def count(least: int):
    """An argparse type: an int of at least ``least`` (argparse's exit 2 naming the option otherwise)."""
    import argparse

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if v < least:
            raise argparse.ArgumentTypeError(f"{v} is below {least}")
        return v

    return parse


def other_streams_files(out: Path, rounds: int, base_name: str) -> list[str]:
    """The files in ``out`` a stream of ``rounds`` deltas with base ``base_name`` would not overwrite but
    ``copter step out/delta_*.parquet`` or ``copter init out/base.*`` would read beside it: ``delta_NNNN.parquet``
    past ``rounds`` and the base of the other format. Another stream's deltas left beside a new base were taken as
    its rounds without a word (helper-238, session 59). Only the generators' own file names count. Sorted."""
    import re

    if not out.is_dir():
        return []
    other = "base.mps" if base_name == "base.parquet" else "base.parquet"
    found = []
    for f in out.iterdir():
        m = re.fullmatch(r"delta_(\d{4,})\.parquet", f.name)
        if (m and int(m.group(1)) > rounds) or f.name == other:
            found.append(f.name)
    return sorted(found)
