"""A round's output files (solution/duals/changes Parquet inside its generation), the ``--out`` copy of
them, and the checks that refuse an unusable output path before any work."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from solver.model.errors import UsageError

if TYPE_CHECKING:  # annotations only: show --solution reads file_round without scipy (solver.model.problem)
    import pyarrow as pa

    from formats.checkpoint import Generation
    from solver.model.problem import Problem

# pyarrow.parquet and formats.reports (pyarrow.compute) are imported by the functions that write or read the
# files: `copter export` checks its -o with check_output_file and needs neither (issue #15: start-up)

OUTPUT_FILES = ("solution.parquet", "duals.parquet", "changes.parquet")
ROUND_KEY = "copter.round"  #: Parquet key-value metadata of every output file: its round number (ASCII digits)


def with_round(table: pa.Table, round_: int) -> pa.Table:
    """``table`` with :data:`ROUND_KEY` = ``round_`` added to its schema metadata (other keys kept)."""
    meta = dict(table.schema.metadata or {})
    meta[ROUND_KEY.encode()] = str(int(round_)).encode()
    return table.replace_schema_metadata(meta)


def file_round(path) -> int | None:
    """The round number an output file carries (:data:`ROUND_KEY`), or None when it has none (written
    before the key existed).

    Raises:
        OSError, pyarrow.ArrowException: the file cannot be read as Parquet.
        ValueError: the key holds something other than ASCII digits.
    """
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(ROUND_KEY.encode())
    if raw is None:
        return None
    if not (raw.isdigit() and raw.isascii()):
        raise ValueError(f"{path}: {ROUND_KEY} = {raw!r} is not a round number")
    return int(raw)


def write_outputs(writer, problem: Problem, result, old: Problem | None, old_x, info=None,
                  tol: float | None = None) -> int:
    """Write solution/duals/changes Parquet files into the generation ``writer`` is writing.

    Args:
        writer: the open ``formats.checkpoint`` generation writer.
        problem, result: this round's problem (n columns, m rows) and solve result.
        old, old_x: the previous round's problem and (n_old,) allocation, or None for round 0.
        info: the ``solver.differential.ApplyInfo`` of the round's delta (index maps), or None.
        tol: the round's relative solve tolerance (``Settings.tol``): a continuous variable counts as moved
            when ``|new - old| > tol * max(1, |old|, |new|)``, an integer one when its value differs at all
            (``formats.reports.changes_table``); None: ``formats.reports.MOVE_TOL`` (1e-4).
    Returns:
        The number of changed variables (``changed_variables`` of the report).

    Every file carries the generation's round number (``writer.round``) as Parquet metadata
    :data:`ROUND_KEY`, so a copy (``--out``) still says which round it holds.
    """
    from formats import reports

    tol = reports.MOVE_TOL if tol is None else tol
    r = writer.round
    reports.write_parquet(writer.path("solution.parquet"),
                          with_round(reports.solution_table(problem.col_names, result.x, result.reduced_cost), r),
                          False)
    reports.write_parquet(writer.path("duals.parquet"),
                          with_round(reports.duals_table(problem.row_names, result.row_activity, result.y), r), False)
    changes = reports.changes_table(None if old is None else old.col_names, old_x, problem.col_names, result.x,
                                    None if old is None else old.row_names, problem.row_names,
                                    col_map=None if info is None else info.col_map,
                                    row_map=None if info is None else info.row_map, tol=tol,
                                    integer=problem.integrality if problem.is_mip else None)
    reports.write_parquet(writer.path("changes.parquet"), with_round(changes, r), False)
    return reports.changed_variable_count(changes)


def previous_allocation(prev: Generation):
    """The previous round's returned (n_old,) point: solution.parquet's values (falls back to the state's x)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = prev.path / "solution.parquet"
    try:  # ParquetFile.read, not read_table: read_table imports pyarrow.dataset (issue #15: start-up)
        with pq.ParquetFile(path) as f:
            return f.read(columns=["value"]).column("value").to_numpy()
    except (OSError, pa.ArrowException):
        return prev.state.x if prev.state is not None else None


def check_output_file(path, option: str, inputs: tuple = ()) -> None:
    """Refuse an output file path that cannot be written, before any work is done.

    Args:
        path: the output file; option: the option that named it, for the message.
        inputs: files the command reads (``(label, path)`` pairs): the output may be none of them.
    Raises:
        UsageError: ``path`` is a folder, or its folder does not exist (or is not a folder), or it is one
            of ``inputs`` (the same file by any name: writing would replace what is being read), or it lies
            inside a copter state directory (``solver.rounds.inside_state``); the message names the option
            and the path. EnvironmentFaultError: the folder is on a read-only file system or not writable
            for this user (exit code 7, as when a write fails later).
    """
    from solver.rounds.inside_state import refuse_inside_state

    refuse_folder_text(path, option)
    p = Path(path)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        raise UsageError(f"{option} {p}: is a folder, not a file")
    refuse_special(p, option)
    refuse_inside_state(p, option)
    for label, src in inputs:
        if _same_file(p, Path(src)):
            raise UsageError(f"{option} {p}: is the {label} {src}; writing it would replace the input: "
                             "choose another file", file=str(p))
    if not parent.is_dir():
        from formats.path_words import folder_words

        raise UsageError(f"{option} {p}: folder {parent} {folder_words(parent)}")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise _unwritable(option, p, parent)


def refuse_folder_text(path, option: str) -> None:
    """Refuse an output file given as text that ``Path()`` would turn into another name: empty (the working directory)
    or ending in / (a folder's name; ``-o r.html/`` wrote the file ``r.html``, helper-213). The CLI refuses both while
    parsing (``copter_cli.state_option``); this is the library's own check.

    Raises:
        UsageError: naming ``option`` and the text.
    """
    if isinstance(path, str) and (path == "" or path.endswith("/")):
        what = "an empty name" if path == "" else "a name ending in / (a folder)"
        raise UsageError(f"{option} {path!r}: give the file to write, not {what}")


def make_folder(path, option: str) -> list[Path]:
    """Create the output folder ``path`` (and its missing parents) that ``option`` names, or find it there.

    Returns:
        the folders this call created, deepest first (empty when ``path`` was there): what
        :func:`remove_made_folders` takes away again when the command fails later.
    Raises:
        EnvironmentFaultError: the machine refuses it (exit 7 naming the path): permission, read-only, full, or a
            folder that takes no new entry (``/proc``: ENOENT although the parent exists; helper-213, it was
            "internal error", exit 1).
    """
    from formats.faults import as_environment_fault, environment_faults

    p = Path(path)
    made = []
    q = p.absolute()
    while not q.exists() and q != q.parent:
        made.append(q)
        q = q.parent
    with environment_faults(p, destination=True):
        try:
            p.mkdir(parents=True, exist_ok=True)
        except FileNotFoundError as err:
            fault = as_environment_fault(err, p, destination=True)
            fault.message += (f"; {option} {p}: the folder it would be made in accepts no new entry (a pseudo file "
                              "system such as /proc, or a folder removed meanwhile)")
            raise fault from err
    return made


def remove_made_folders(made: list[Path]) -> None:
    """Remove the folders :func:`make_folder` created (deepest first), each only while it is empty: a command
    that failed after making its output folder leaves nothing behind (hunt 56: ``copter report --png DIR``
    whose page could not be written left an empty DIR). Best effort: a folder that cannot be removed stays."""
    for folder in made:
        try:
            folder.rmdir()
        except OSError:
            return


def refuse_special(path, option: str) -> None:
    """Refuse an output name that is (or links to) a device, FIFO or socket (``formats.atomic.special_kind``):
    copter writes a new file next to it and renames it over the name, which put a regular file in place of
    ``/dev/null`` (``copter report -o /dev/null`` run as root).

    Raises:
        UsageError: naming the option, the path and what it is.
    """
    from formats.atomic import special_kind

    kind = special_kind(path)
    if kind is not None:
        raise UsageError(f"{option} {path}: is {kind}, not a file: copter writes a new file and renames it over "
                         "this name, which would put a regular file in its place; give a file name (copter prints "
                         "its answer on standard output itself)")


def _same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (hard and symbolic links included), or would once written."""
    try:
        return os.path.samefile(a, b)
    except OSError:  # one does not exist (yet): compare the resolved names
        return os.path.realpath(a) == os.path.realpath(b)


def _unwritable(option: str, path: Path, folder: Path):
    """The EnvironmentFaultError for an output whose folder cannot be written: read-only file system or
    permission (``os.statvfs``'s read-only flag tells them apart)."""
    from solver.model.errors import EnvironmentFaultError

    try:
        read_only = bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    why = "is on a read-only file system" if read_only else "is not writable (permission denied)"
    return EnvironmentFaultError(f"{option}: folder {folder} {why}", file=str(path),
                                 reason="read_only" if read_only else "permission",
                                 errno_name="EROFS" if read_only else "EACCES")


def check_out_dir(out_dir, state_dir=None, inputs: tuple = ()) -> None:
    """Refuse an ``--out`` folder that cannot be used, before any work (nothing is created here).

    Args:
        out_dir: the ``--out`` folder (None: nothing to check).
        inputs: files the command reads (``(label, path)`` pairs; a path that is not a file, e.g. ``-`` or an
            in-memory delta, is skipped): none may be one of the files ``--out`` writes (``solution.parquet``,
            ``duals.parquet``, ``changes.parquet``, ``report.json``), by any name: ``step X/solution.parquet
            --out X`` replaced its own delta with the round's solution, and a batch's later delta so replaced
            failed as "unknown column 'name'" (helper-170).
        state_dir: the state directory, when known: an ``out_dir`` that is it or inside it (symbolic links
            resolved) is refused, since its copies would overwrite the state's own files (``gen-000000``),
            even before ``init`` has made it a state; one inside any other state directory is refused too
            (``solver.rounds.inside_state``).
    Raises:
        UsageError: ``out_dir`` is ``-``, exists and is not a folder, or cannot be created (its nearest existing
            ancestor is a file), or lies inside ``state_dir`` or another state, or one of its output files is
            one of ``inputs`` or a folder. EnvironmentFaultError: it (or
            the ancestor it would be created in) is on a read-only file system or not writable (exit code 7).
    """
    from solver.rounds.inside_state import refuse_inside_state

    if out_dir is None:
        return
    if str(out_dir) == "-":  # a folder named "-" was made: --out is a folder, never standard output (helper-203)
        raise UsageError("--out -: --out names a folder for the round's files, not standard output (the report goes "
                         "to stdout as the command's answer; --json makes it JSON)")
    p = Path(out_dir)
    if state_dir is not None:
        real_out, real_state = Path(os.path.realpath(p)), Path(os.path.realpath(state_dir))
        if real_out == real_state or real_state in real_out.parents:
            raise UsageError(f"--out {p}: is inside the state directory {state_dir}; the copies would overwrite "
                             "the state's own files: choose a folder outside it")
    refuse_inside_state(p, "--out")
    from formats.path_words import missing_words

    unusable = missing_words(p, "folder")  # a link loop, a dangling link: refused before the round (helper-232)
    if unusable is not None and unusable != "folder not found":
        raise UsageError(f"--out {p}: {unusable}")
    if p.exists():
        if not p.is_dir():
            raise UsageError(f"--out {p}: exists and is not a folder")
        outs = [p / name for name in (*OUTPUT_FILES, "report.json")]
        files = [(label, Path(src)) for label, src in inputs  # a missing input is the reader's error
                 if isinstance(src, (str, os.PathLike)) and str(src) != "-" and os.path.exists(src)]
        for out in outs:
            for label, src in files:
                if _same_file(out, src):
                    raise UsageError(f"--out {p}: its {out.name} is the {label} {src}; writing it would replace the "
                                     "input: choose another folder")
        if not os.access(p, os.W_OK | os.X_OK):
            raise _unwritable("--out", p, p)
        for out in outs:
            refuse_special(out, "--out")
            if out.is_dir():  # the round was stored, then its copy failed: refused before any work (helper-203)
                raise UsageError(f"--out {p}: {out} is a folder, where the round's {out.name} goes: remove it or "
                                 "choose another folder")
        return
    anc = p.parent
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise UsageError(f"--out {p}: cannot create it, {anc} is not a folder")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise _unwritable("--out", p, anc)


def copy_out(state_dir: Path, report: dict, out_dir) -> dict:
    """Copy the round's outputs and report.json into ``out_dir``; return the report.

    Each file is written to a new temporary file in ``out_dir`` and renamed over its name
    (``formats.atomic``): a symbolic link planted at ``out_dir/solution.parquet`` is replaced, its target
    never written. The round is already stored and current: a failure here never raises; it returns a copy
    of the report with a warning and ``out_error`` = {"kind": "environment" (the machine refused: permission,
    read-only file system, disk full; then also "reason" and "errno") or "usage" (any other reason),
    "message", "file", "round_stored"} (the CLI exits 7 or 2 for it when the round itself succeeded).
    """
    if out_dir is None:
        return report
    from formats import reports
    from formats.atomic import copy_file, write_text
    from formats.faults import as_environment_fault, is_environment_fault
    from solver.model.errors import EnvironmentFaultError

    out = Path(out_dir)
    target = out
    try:
        try:
            out.mkdir(parents=True, exist_ok=True)
        except FileNotFoundError as err:  # check_out_dir saw its nearest folder exist: that folder takes no entry
            fault = as_environment_fault(err, out, destination=True)
            fault.message += ("; its folder accepts no new entry (a pseudo file system such as /proc, or the folder "
                              "was removed meanwhile)")
            raise fault from err
        for key in ("solution_path", "duals_path", "changes_path"):
            if report.get(key):
                target = out / Path(report[key]).name
                copy_file(state_dir / report[key], target)
        target = out / "report.json"
        # a stored round's report.json as the generation holds it: the answer's current_round is not in it
        # (docs/formats.md), so a first run's copy and a no-op re-run's are the same file (helper-236)
        stored_copy = report if report.get("accepted", True) is False else {
            k: v for k, v in report.items() if k != "current_round"}
        write_text(target, reports.dumps(stored_copy) + "\n")
    except (OSError, EnvironmentFaultError) as err:
        # formats.atomic raises its own typed refusal (a folder that takes no file); OSErrors are typed here
        # named by its destination: the temporary name formats.atomic wrote first means nothing to the user (a
        # folder at od/solution.parquet was reported as "cannot write od/.solution.parquet.591-875ee8be.tmp")
        fault = err if isinstance(err, EnvironmentFaultError) else (
            as_environment_fault(err, target) if is_environment_fault(err) else None)
        where = fault.file if fault is not None else target
        why = str(fault) if fault is not None else f"cannot write {where}: {err.strerror or err}"
        stored = report.get("accepted", True) is not False
        if stored:
            msg = f"round {report.get('round')} is stored and current, but copying its outputs to --out {out} failed"
        else:
            msg = (f"round {report.get('round')} was not stored (CURRENT stays at round "
                   f"{report.get('current_round')}), and copying its report to --out {out} failed")
        msg += f": {why}"
        report = dict(report)
        report["warnings"] = [*report.get("warnings", []), msg]
        report["out_error"] = {"kind": "environment" if fault is not None else "usage",
                               "message": msg, "file": str(where), "round_stored": stored}
        if fault is not None:
            report["out_error"].update(reason=fault.reason, errno=fault.errno_name)
    return report
