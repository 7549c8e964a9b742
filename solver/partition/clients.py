"""Which columns belong to which client, and which rows are shared resources (for POP and partitioned rounds).

POP (Narayanan et al., SOSP 2021) splits the *clients* of an allocation problem (jobs, commodities,
shards) into k random groups and gives each group 1/k of every *shared resource* (GPU capacity, link
capacity, server load and memory). This module finds both from the problem alone:

- **clients** (default): the text of a variable's name before its first ``/``, the naming convention of
  copter's workload generators (``job17/a100/x4``, ``d3-7/p2``, ``shard12/srv3/r``). With
  ``client_regex``, the client is the text matched by the regex's named group ``client`` (or by the whole
  regex if it has no such group; RE2 syntax, search semantics). A variable that yields no client (no
  ``/``, no regex match, or an empty client) is **global**: shared by every client (e.g. ``alpha``, the concurrent-flow
  fraction of TE's max-concurrent-flow form); POP copies it into every part.
- **shared rows**: every row whose nonzeros touch more than one client (found from the matrix), plus, with
  ``shared_rows_regex``, every nonempty row whose name matches that regex (search semantics; anchor with
  ``^``...``$``). Every other row belongs to the one client it touches (global variables do not count);
  a row touching only global variables is a global row (kept, unscaled, in every part). Rows without
  nonzeros belong to nobody.

All work is vectorised (pyarrow compute on names, numpy on the nonzeros): O(n + m + nnz).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from solver.model.errors import UsageError
from solver.model.problem import Problem

SHARED = -1  #: ``row_client`` value of a shared row
EMPTY = -2   #: ``row_client`` value of a row without nonzeros
GLOBAL = -3  #: ``row_client`` value of a row touching only global variables; ``col_client`` of a global column


@dataclass(eq=False)
class ClientGrouping:
    """Columns grouped by client and rows classified as client-owned or shared.

    Attributes:
        col_client: (n,) int64 client id of every column, in ``0 .. n_clients-1``, or :data:`GLOBAL`.
        client_names: (n_clients,) object array of client names.
        row_client: (m,) int64 owning client of every row, or :data:`SHARED`, :data:`GLOBAL`, :data:`EMPTY`.
        previous_client: None, or (n_clients,) int64 each client's index in ``carried_from``, -1 for a client new
            this round: what ``solver.partition.layout.route`` would otherwise find by joining the names (0.2-0.3 s
            at TE Kdl's 568k clients).
        carried_from: None, or the very array of client names the grouping was carried from
            (:func:`carry_grouping`'s ``prev_client_names``; ``route`` uses ``previous_client`` only for it).
    """

    col_client: np.ndarray
    client_names: np.ndarray
    row_client: np.ndarray
    previous_client: np.ndarray | None = None
    carried_from: np.ndarray | None = None

    @property
    def n_clients(self) -> int:
        return int(self.client_names.shape[0])

    @property
    def shared(self) -> np.ndarray:
        """(m,) bool mask of the shared rows."""
        return self.row_client == SHARED

    @property
    def global_cols(self) -> np.ndarray:
        """(n,) bool mask of the global columns."""
        return self.col_client == GLOBAL


POP_OPTIONS = ("--pop-client-regex", "--pop-shared-rows-regex")  #: the regex options as ``copter compare`` names them
PARTITION_OPTIONS = ("--client-regex", "--shared-rows-regex")  #: as ``copter init --partitions`` names them


def _compile_check(pattern: str, what: str) -> None:
    try:
        re.compile(pattern)
    except re.error as err:
        raise UsageError(f"invalid {what} {shlex.quote(pattern)}: {err}") from err


def _client_keys(names: pa.Array, client_regex: str | None, option: str = POP_OPTIONS[0]) -> pa.Array:
    """(n,) client key per column name (null when no client can be read from it: a global column). An empty
    client (``/x``, or a group that matched nothing, as ``^(?P<client>x)?`` on every name) is no client: it
    made one client named "" of every such name. A regex that does not compile, or that RE2 refuses, is a
    UsageError naming ``option``, the option the user gave it with."""
    if client_regex is None:
        has = pc.match_substring(names, "/")
        keys = pc.if_else(has, pc.list_element(pc.split_pattern(names, "/", max_splits=1), 0), None)
    else:
        _compile_check(client_regex, option)
        found = _client_found(names, client_regex, option)
        keys = pc.if_else(found.is_valid(), pc.struct_field(found, "client"), None)
    return pc.if_else(pc.equal(keys, ""), pa.scalar(None, keys.type), keys)


def _client_found(names: pa.Array, client_regex: str, option: str) -> pa.Array:
    """``pc.extract_regex`` of the client group (the whole regex when it has none) on ``names``: a struct with
    field ``client`` per name, null where the regex does not match."""
    pattern = client_regex if "(?P<client>" in client_regex else f"(?P<client>{client_regex})"
    try:
        found = pc.extract_regex(names, pattern)
    except pa.ArrowInvalid as err:
        hint = (" (every group must be named: write (?:...) for a group, (?P<client>...) for the client's part)"
                if "unnamed groups" in str(err) else "")
        raise UsageError(f"invalid {option} {shlex.quote(client_regex)}: {err}{hint}") from err
    return found


def group_clients(problem: Problem, *, client_regex: str | None = None,
                  shared_rows_regex: str | None = None, options: tuple[str, str] = POP_OPTIONS) -> ClientGrouping:
    """Group ``problem``'s columns by client and classify its rows (see the module docstring).

    Args:
        problem: the full problem (n columns, m rows, nnz nonzeros).
        client_regex: optional regex for the client part of variable names.
        shared_rows_regex: optional regex naming rows that are shared even if one client uses them.
        options: the options the two regexes were given with, named in an error (:data:`POP_OPTIONS`,
            :data:`PARTITION_OPTIONS`).
    Returns:
        ClientGrouping.
    Raises:
        UsageError: when a regex does not compile (or RE2 refuses it).
    """
    names = pa.array(problem.col_names, type=pa.string())
    enc = _client_keys(names, client_regex, options[0]).dictionary_encode()
    col_client = enc.indices.fill_null(GLOBAL).to_numpy(zero_copy_only=False).astype(np.int64)
    client_names = np.asarray(enc.dictionary.to_pylist(), dtype=object)

    row_client = row_clients(problem, col_client, shared_rows_regex, options[1])
    return ClientGrouping(col_client=col_client, client_names=client_names, row_client=row_client)


def row_clients(problem: Problem, col_client: np.ndarray, shared_rows_regex: str | None = None,
                option: str = POP_OPTIONS[1]) -> np.ndarray:
    """(m,) int64 owning client of every row given the (n,) client of every column (:class:`ClientGrouping`'s
    ``row_client``): the one client its nonzeros touch, :data:`SHARED` when they touch more (or its name matches
    ``shared_rows_regex`` and it has a nonzero), :data:`GLOBAL` when only global columns, :data:`EMPTY` when none.
    One pass over the matrix (``solver.partition.clients_kernels.row_clients``, numpy twin in ``clients_ref``).

    Raises:
        UsageError: ``shared_rows_regex`` does not compile (named as ``option``).
    """
    from solver.partition.clients_kernels import row_clients as kernel

    row_client = kernel(problem.a_indptr, problem.a_indices, np.asarray(col_client, dtype=np.int64),
                        problem.n_rows, SHARED, EMPTY, GLOBAL)
    if shared_rows_regex is not None:
        _compile_check(shared_rows_regex, option)
        try:
            hit = pc.match_substring_regex(pa.array(problem.row_names, type=pa.string()), shared_rows_regex)
        except pa.ArrowInvalid as err:
            raise UsageError(f"invalid {option} {shlex.quote(shared_rows_regex)}: {err}") from err
        hit = hit.to_numpy(zero_copy_only=False).astype(bool)
        row_client[hit & (row_client != EMPTY)] = SHARED
    return row_client


def carry_grouping(problem: Problem, prev_col_client: np.ndarray, prev_client_names: np.ndarray,
                   col_map: np.ndarray, *, client_regex: str | None = None, shared_rows_regex: str | None = None,
                   options: tuple[str, str] = PARTITION_OPTIONS,
                   prev_row_client: np.ndarray | None = None) -> ClientGrouping:
    """:func:`group_clients` of a round's ``problem`` from the previous round's grouping: the same result (client
    ids by first appearance in column order), reading only the NEW columns' names.

    A column a delta keeps keeps its name, so its client: surviving columns take the client of their previous
    column, added ones are read from their names (matched to the previous clients by name, else new clients);
    the rows are classified again from the matrix (:func:`row_clients`, O(nnz)), unless ``prev_row_client`` holds.

    Args:
        problem: the round's problem (n columns).
        prev_col_client: (n_old,) the previous round's ``col_client`` (ids into ``prev_client_names``, GLOBAL).
        prev_client_names: (c_old,) the previous round's client names.
        col_map: (n,) int64 previous column of every column, -1 for an added one (the delta's ``ApplyInfo``).
        prev_row_client: (m,) the previous round's ``row_client``, given only when the delta left the matrix as
            it was (``ApplyInfo.matrix_changed`` False, the same shape): it is the result's ``row_client`` when every
            column also kept its place and its client (then each row's nonzeros meet the same clients), instead
            of :func:`row_clients`' pass over the matrix.
    Raises:
        UsageError: a regex does not compile.
        ValueError: ``prev_col_client`` / ``col_map`` do not fit (the caller groups afresh).
    """
    n, c_old = problem.n_cols, int(prev_client_names.shape[0])
    col_map = np.asarray(col_map, dtype=np.int64)
    prev = np.asarray(prev_col_client, dtype=np.int64)
    if col_map.shape != (n,) or (col_map >= prev.shape[0]).any() or (prev >= c_old).any():
        raise ValueError("the previous grouping does not fit the delta's column map")
    live = col_map >= 0
    raw = np.full(n, GLOBAL, dtype=np.int64)
    raw[live] = prev[col_map[live]]
    added = np.flatnonzero(~live)
    new_names = np.empty(0, dtype=object)
    if added.size:
        enc = _client_keys(pa.array(problem.col_names[added], type=pa.string()), client_regex,
                           options[0]).dictionary_encode()
        keys = enc.dictionary
        hit = pc.index_in(keys, value_set=pa.array(prev_client_names, type=pa.string()))
        found = hit.is_valid().to_numpy(zero_copy_only=False).astype(bool)
        key_id = np.where(found, hit.fill_null(0).to_numpy(zero_copy_only=False), 0).astype(np.int64)
        key_id[~found] = c_old + np.arange(int((~found).sum()), dtype=np.int64)
        new_names = np.asarray(keys.to_pylist(), dtype=object)[~found]
        idx = enc.indices.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
        raw[added] = np.append(key_id, GLOBAL)[idx]  # -1 (no client) picks the GLOBAL appended last; no key: all -1
    own = raw >= 0
    first = np.full(c_old + new_names.size, n, dtype=np.int64)
    np.minimum.at(first, raw[own], np.flatnonzero(own))
    used = np.flatnonzero(first < n)
    used = used[np.argsort(first[used], kind="stable")]  # group_clients' order: first appearance
    renum = np.full(first.size, GLOBAL, dtype=np.int64)
    renum[used] = np.arange(used.size, dtype=np.int64)
    # no client left (every one dropped, none added): nothing to renumber, every column is global
    col_client = (np.where(own, renum[np.maximum(raw, 0)], GLOBAL) if renum.size
                  else np.full(n, GLOBAL)).astype(np.int64)
    names = np.concatenate([np.asarray(prev_client_names, dtype=object), new_names])[used]
    if (prev_row_client is not None and prev_row_client.shape == (problem.n_rows,) and prev.shape == (n,)
            and np.array_equal(col_map, np.arange(n)) and np.array_equal(col_client, prev)):
        row_client = np.asarray(prev_row_client, dtype=np.int64)
    else:
        row_client = row_clients(problem, col_client, shared_rows_regex, options[1])
    return ClientGrouping(col_client=col_client, client_names=np.asarray(names, dtype=object),
                          row_client=row_client,
                          previous_client=np.where(used < c_old, used, -1).astype(np.int64),
                          carried_from=prev_client_names)


NO_CLIENTS = ("partitioned rounds found no clients: variable names carry no '<client>/' prefix; say how to group "
              "columns with --client-regex (and shared rows with --shared-rows-regex)")


def require_clients(grouping: ClientGrouping, client_regex: str | None = None,
                    col_names=None) -> ClientGrouping:
    """``grouping`` when it has a client; else UsageError (exit code 2) saying how to name them. With
    ``client_regex`` and the problem's ``col_names`` it tells a regex that matches no name from one that
    matches names but captures an empty client in each (``(?P<client>)``: an empty client is no client)."""
    if grouping.n_clients == 0:
        msg = NO_CLIENTS if client_regex is None else no_client_matched(client_regex, col_names)
        raise UsageError(msg)
    return grouping


def no_client_matched(client_regex: str, col_names, option: str = PARTITION_OPTIONS[0],
                       who: str = "partitioned rounds") -> str:
    """Why ``option`` (``--client-regex``; compare's ``--pop-client-regex``) found no client for ``who``: it matches
    no name, or only an empty client in the names it matches (counted when ``col_names`` is given)."""
    head = f"{who} found no clients: {option} {shlex.quote(client_regex)} "
    matched = 0
    if col_names is not None:
        names = pa.array(col_names, type=pa.string())
        matched = pc.sum(_client_found(names, client_regex, option).is_valid()).as_py() or 0
    if not matched:
        return head + "matches no variable name"
    which = "every variable name" if matched == len(col_names) else f"{matched} of {len(col_names)} variable names"
    return (head + f"matches {which} but captures an empty client in each (an empty client is no client: such a "
            "variable is global); make the client's part match at least one character, e.g. '^(?P<client>[^/]+)/'")


def check_base_clients(path, client_regex: str | None = None, shared_rows_regex: str | None = None) -> None:
    """Read the base problem at ``path`` (MPS or Parquet, ``formats.io.read_problem``) and raise UsageError when
    its variable names give no client (:func:`require_clients`) or a regex does not compile. For a caller that
    would otherwise compile kernels or start workers before the round reads the base (``copter init
    --partitions K`` on a fresh install); other read errors are left to the round."""
    from formats.io import read_problem

    try:
        problem = read_problem(path)
    except UsageError:
        raise
    except Exception:  # noqa: BLE001 - the round reads it again and reports its error with the documented code
        return
    require_clients(group_clients(problem, client_regex=client_regex, shared_rows_regex=shared_rows_regex,
                                  options=PARTITION_OPTIONS), client_regex, problem.col_names)


#: ``init --partitions`` warns when more than this fraction of the variables have no client (they are global), and
#: a round when its deltas take the fraction above it (:func:`global_growth_warning`)
GLOBAL_WARN_FRACTION = 0.5


def global_growth_warning(prev_col_client: np.ndarray | None, col_client: np.ndarray) -> str | None:
    """The warning of a partitioned round whose variables without a client (global: every part holds them all) are
    more than :data:`GLOBAL_WARN_FRACTION` of the model when the previous round's were not. ``init`` checks the base
    only (:func:`grouping_warnings`), so deltas that added global columns round after round went unsaid while each
    part grew toward the whole model (helper-214, session 54). Said once, on the round that crosses the line.

    Args:
        prev_col_client: (n_old,) the previous round's ``col_client`` (GLOBAL for a global column), or None when
            not known (nothing is said). col_client: (n,) this round's.
    Returns:
        A sentence, or None.
    """
    n, n_old = int(col_client.shape[0]), 0 if prev_col_client is None else int(prev_col_client.shape[0])
    if prev_col_client is None or n == 0:
        return None
    now, before = int(np.count_nonzero(col_client == GLOBAL)), int(np.count_nonzero(prev_col_client == GLOBAL))
    if now <= GLOBAL_WARN_FRACTION * n or before > GLOBAL_WARN_FRACTION * n_old:
        return None
    # the advice fits what the delta did: a delta that only dropped clients added nothing to rename (helper-231)
    advice = (f"name the added variables '<client>/...' (or as {PARTITION_OPTIONS[0]} reads them)" if now > before else
              "this round added none: the clients it dropped left them the majority (a monolithic state, or names "
              "that give them clients, lets the parts divide the model again)")
    return (f"{now:,} of {n:,} variables ({now / n:.0%}) now have no client (the previous round: {before:,} of "
            f"{n_old:,}): every part holds all of them, so the parts no longer divide the model and the merged point "
            f"can be far from the optimum; {advice}")


def grouping_warnings(problem: Problem, client_regex: str | None = None,
                      shared_rows_regex: str | None = None) -> list[str]:
    """The warnings ``init --partitions K`` gives about how the base's names group (helper-185, session 46: both
    were silent):

    - ``shared_rows_regex`` that matches no row name: it shares nothing, and is stored for every round (a typo such
      as ``links/`` for ``link/`` went unnoticed);
    - more than :data:`GLOBAL_WARN_FRACTION` of the variables without a client (global): each part holds them all,
      so the parts do not divide the model (``--client-regex '^(?P<client>d1\\d)-'`` left 2,800 of 3,762 TE
      columns global, and the merged point was 28% below the optimum without a word).

    Args:
        problem: the base (n columns, m rows); the regexes as given (None: the default convention / no regex).
    Returns:
        A list of sentences, empty when neither applies. Raises UsageError as :func:`group_clients` does.
    """
    out = []
    if shared_rows_regex is not None and problem.n_rows:
        _compile_check(shared_rows_regex, PARTITION_OPTIONS[1])
        try:
            hit = pc.match_substring_regex(pa.array(problem.row_names, type=pa.string()), shared_rows_regex)
        except pa.ArrowInvalid as err:  # Python compiles it, RE2 does not (a lookahead): as row_clients says
            raise UsageError(f"invalid {PARTITION_OPTIONS[1]} {shlex.quote(shared_rows_regex)}: {err}") from err
        if not pc.any(hit).as_py():
            out.append(f"{PARTITION_OPTIONS[1]} {shlex.quote(shared_rows_regex)} matches no row name, so it shares "
                       "no row (rows that two or more clients' variables use are shared anyway); it is stored and "
                       "applies to every round")
    n = problem.n_cols
    if n:
        names = pa.array(problem.col_names, type=pa.string())
        n_global = int(pc.sum(pc.is_null(_client_keys(names, client_regex, PARTITION_OPTIONS[0]))).as_py() or 0)
        if n_global > GLOBAL_WARN_FRACTION * n:
            by = (f"{PARTITION_OPTIONS[0]} {shlex.quote(client_regex)} finds no client in their names"
                  if client_regex is not None else "their names carry no '<client>/' prefix")
            out.append(f"{n_global:,} of {n:,} variables ({n_global / n:.0%}) have no client ({by}): every part "
                       "holds all of them, so the parts do not divide the model and the merged point can be far "
                       f"from the optimum; say how names group with {PARTITION_OPTIONS[0]}")
    return out
