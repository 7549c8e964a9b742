"""``copter convert`` (MPS <-> Parquet by extension) and ``copter diff`` (the delta between two problems).

``--json`` keys follow the rest of the CLI: problem sizes are ``n_rows``/``n_cols``/``nnz`` (as in round
reports, ``solve`` and ``export``), the file written is ``output``, ``seconds`` is a dict of phases.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer

from copter_cli.solver_options import check_range, range_help
from formats.number_text import MAX_ROUND

JSON_OPT = typer.Option(False, "--json", help="Print one JSON object on stdout.")
DEBUG_OPT = typer.Option(False, "--debug", help="Show a traceback on errors.")


def convert(
    src: Path = typer.Argument(..., metavar="SRC", help="Input problem: .mps, .mps.gz or .parquet."),
    dst: Path = typer.Argument(..., metavar="DST", help="Output problem: .mps, .mps.gz or .parquet."),
    json_out: bool = JSON_OPT,
    debug: bool = DEBUG_OPT,
) -> None:
    """Convert a problem between MPS and Parquet.

    The format of SRC and DST is chosen by each file's extension."""
    from copter_cli.output import answering, console, print_json, run, say_warnings
    from copter_cli.printable import printable

    def body() -> int:
        from formats.io import kind_of, read_problem, write_problem
        from solver.rounds.outputs import check_output_file

        check_output_file(dst, "DST", inputs=(("SRC", src),))  # a folder: exit 2 as export -o's (was 3, a "model file")
        kind_of(dst)  # refuse an unknown output extension before reading anything
        from formats.read_notes import collect

        t0 = time.perf_counter()
        with collect() as notes:  # the reader's warnings: in the answer's "warnings" (and on stderr, once)
            problem = read_problem(src)
        t1 = time.perf_counter()
        write_problem(problem, dst)
        t2 = time.perf_counter()
        out = {"input": str(src), "output": str(dst), "n_rows": problem.n_rows, "n_cols": problem.n_cols,
               "nnz": problem.nnz, "n_integer": int(problem.integrality.sum()),
               "sense": "max" if problem.sense == -1 else "min", "objective_offset": problem.offset,
               "seconds": {"read": t1 - t0, "write": t2 - t1}}
        from formats.mps_infinity import written_warnings

        warnings = notes + written_warnings(problem, dst)  # a 5e20 bound: finite here, infinite to HiGHS's defaults
        if warnings:
            out["warnings"] = warnings
        if json_out:
            print_json(out)
        else:
            with answering():
                console.print(f"{printable(str(src))} -> {printable(str(dst))}: {problem.n_rows} rows, {problem.n_cols} columns "
                              f"({out['n_integer']} integer), {problem.nnz} nonzeros "
                              f"(read {t1 - t0:.2f} s, write {t2 - t1:.2f} s)", markup=False)
        say_warnings(out)
        return 0

    run(json_out, debug, body)


def diff_cmd(
    old: Path = typer.Argument(..., metavar="OLD", help="The previous full problem (.mps, .mps.gz or .parquet)."),
    new: Path = typer.Argument(..., metavar="NEW", help="The new full problem."),
    output: Path = typer.Option(..., "-o", "--output", help="Delta file to write (.parquet)."),
    base_round: int = typer.Option(None, "--base-round", help="Record copter.base_round = N in the delta "
                                   "(default: the round OLD was exported from, when OLD is a Parquet file of "
                                   "`copter export`, which records it; else none)." + range_help(0, MAX_ROUND)),
    by_name: bool = typer.Option(False, "--by-name", help="Keep every variable and constraint in both (its warm "
                                 "start; new ones appended): NEW up to the order of entities. Without it, the "
                                 "survivors after NEW's first new name are dropped and re-added to give its order."),
    json_out: bool = JSON_OPT,
    debug: bool = DEBUG_OPT,
) -> None:
    """Write the delta that turns OLD into NEW.

    Applying it to OLD gives NEW exactly (with --by-name: up to the order of entities)."""
    from copter_cli.output import answering, print_json, run, say, say_warnings
    from copter_cli.printable import printable

    def body() -> int:
        import pyarrow as pa
        import pyarrow.compute as pc

        from formats.io import kind_of, read_problem, write_delta
        from solver.differential.diff import diff, recreate_cause, recreated
        from solver.model.delta import KINDS
        from solver.model.errors import UsageError
        from solver.rounds.outputs import check_output_file

        if base_round is not None:  # a negative round or one of 19+ digits: a delta every step would refuse (exit 3)
            check_range("--base-round", base_round, 0, MAX_ROUND)
        check_output_file(output, "-o", inputs=(("OLD", old), ("NEW", new)))  # a folder: exit 2, as export -o's
        if kind_of(output) != "parquet":
            raise UsageError("the delta must be written as .parquet", file=str(output))
        from formats.read_notes import collect

        t0 = time.perf_counter()
        from formats.parquet import sense_note

        with collect() as notes:  # the readers' warnings: in the answer's "warnings" (and on stderr, once)
            a = read_problem(old)
        with collect() as new_notes:  # NEW without a sense keeps OLD's (_objective_kept), which says so itself
            b = read_problem(new)
        notes += [n for n in new_notes if n != sense_note(new)]
        t1 = time.perf_counter()
        base, base_from, base_notes, digest = _base_round(old, base_round, a)
        b, kept_notes = _objective_kept(new, a, b)
        delta = diff(a, b, by_name=by_name)
        delta.base_round = base
        if base_from == "OLD":  # the export's round AND its content: step refuses it on another branch's round
            from formats.exported_round import BASE_DIGEST_KEY

            delta.meta = {**delta.meta, BASE_DIGEST_KEY: digest}
        again = {"var": 0, "con": 0} if by_name else recreated(a, b)
        t2 = time.perf_counter()
        write_delta(delta, output)
        secs = {"read": t1 - t0, "diff": t2 - t1, "write": time.perf_counter() - t2}
        counts = {k: 0 for k in KINDS}
        if delta.table.num_rows:
            kinds = delta.table.column("kind").combine_chunks().cast(pa.string())
            counts.update({d["values"]: int(d["counts"]) for d in pc.value_counts(kinds).to_pylist()})
        out = {"old": str(old), "new": str(new), "output": str(output), "delta_rows": delta.table.num_rows,
               "counts": counts, "sense_changed": delta.sense is not None,
               "offset_changed": delta.offset is not None, "base_round": base, "base_round_from": base_from,
               "recreated": again, "seconds": secs, "warnings": [*notes, *base_notes, *kept_notes]}
        if again["var"] or again["con"]:  # a new name or a reorder: NEW's order costs their warm start
            out["warnings"].append(
                f"{again['var']} variable(s) and {again['con']} constraint(s) in both OLD and NEW are dropped and "
                f"re-added to give NEW's order ({recreate_cause(a, b)}): the next round starts them cold "
                "and its changes list them removed and added; --by-name keeps them (NEW up to the order)")
        if not out["warnings"]:  # as every other command: the key only when there is a warning
            del out["warnings"]
        if json_out:
            print_json(out)
        else:
            parts = ", ".join([f"{v} {k}" for k, v in counts.items() if v]
                              + (["sense changed"] if delta.sense is not None else [])
                              + (["objective offset changed"] if delta.offset is not None else []))
            based = {"--base-round": f"copter.base_round {base}",
                     "OLD": f"copter.base_round {base}: OLD is round {base}'s export",
                     None: "no copter.base_round (--base-round N gives it)"}[base_from]
            with answering():
                say(f"{printable(str(output))}: {delta.table.num_rows} rows ({parts or 'no changes'}); {based}")
        say_warnings(out)
        return 0

    run(json_out, debug, body)


def _objective_kept(new: Path, a, b) -> tuple:
    """NEW as the delta should see it, and warnings: a Parquet NEW without ``copter.sense`` (or
    ``copter.objective_offset``) keeps OLD's sense (offset) instead of the reader's default (min, 0). pandas and
    pyarrow's ``Table.from_pylist`` drop a file's metadata, so an export of a maximisation edited that way read as a
    minimisation, and the delta turned the state's model into one: its next round OPTIMAL at 0, every client with
    nothing (a user's trial, session 52). An MPS NEW says its sense itself (OBJSENSE, min by default)."""
    from formats.io import kind_of

    if kind_of(new) != "parquet" or (a.sense == b.sense and a.offset == b.offset):
        return b, []
    import pyarrow.parquet as pq

    meta = pq.read_schema(new).metadata or {}
    notes, keep = [], {}
    why = "(pandas and pyarrow's Table.from_pylist drop a file's metadata)"
    if a.sense != b.sense and b"copter.sense" not in meta:
        keep["sense"] = a.sense
        notes.append(f"NEW ({new}) has no copter.sense {why}: OLD's {'min' if a.sense == 1 else 'max'} is kept; "
                     f"write copter.sense={'max' if a.sense == 1 else 'min'} into NEW to change the sense")
    if a.offset != b.offset and b"copter.objective_offset" not in meta:
        keep["offset"] = a.offset
        notes.append(f"NEW ({new}) has no copter.objective_offset {why}: OLD's {a.offset!r} is kept; write "
                     "copter.objective_offset into NEW to change it")
    return (b.replace(**keep) if keep else b), notes


def _base_round(old: Path, given: int | None, problem) -> tuple[int | None, str | None, list[str], str | None]:
    """(the delta's base round, where it came from, warnings, OLD's verified problem digest when it came from
    OLD, else None): ``given`` (``--base-round``) wins, with a
    warning when OLD is the export of another round; else the round a Parquet OLD was exported from (its
    ``copter.round``, written only by ``copter export``, while its content is still what export wrote:
    ``formats.exported_round.verified_round``), ``"OLD"``; else none (an MPS OLD records no round), with a
    warning when OLD names a round it can no longer vouch for. ``problem``: OLD as read.

    Raises:
        FormatError: OLD's ``copter.round`` is not a round number."""
    from formats.io import kind_of

    recorded, why, digest = None, None, None
    if kind_of(old) == "parquet":
        from formats.exported_round import verified_round

        recorded, why, digest = verified_round(old, problem)
    if given is not None:
        clash = recorded is not None and why is None and recorded != given
        return given, "--base-round", ([f"OLD {old} is the export of round {recorded} (its copter.round), but "
                                        f"--base-round {given} was given: the delta says round {given}, as given"]
                                       if clash else []), None
    if recorded is None:
        return None, None, [], None
    if why is not None:
        return None, None, [f"OLD {old} names round {recorded} (copter.round) but {why}: the delta records no "
                            f"copter.base_round; give --base-round N for the round OLD is"], None
    return recorded, "OLD", [], digest


def register(app: typer.Typer) -> None:
    """Add ``convert`` and ``diff`` to the app."""
    app.command("convert")(convert)
    app.command("diff")(diff_cmd)
