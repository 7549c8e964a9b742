"""Real-data inputs for the TE scenario: Topology Zoo GraphML, node-link JSON (POP/Teal) and traffic matrices.

- GraphML (Topology Zoo, as shipped by POP): undirected links without capacities; per the standard
  practice (POP, NCFlow) both directions get capacity 1000, and only the largest strongly connected
  component is kept (:func:`solver.workloads.te.make_topology`).
- JSON (networkx node-link, POP's and Teal's): ``nodes`` with ``id``, ``links`` with ``source``,
  ``target`` and (Teal) ``capacity``; ``directed`` says whether links are one-way.
- Traffic matrices (``topologies/tm/``): dense n x n CSV, row = source, column = destination, indexed
  by node id; B4's 36 real matrices form a round sequence (``B4.json_real_<k>_1.0_traffic-matrix.csv``).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from solver.model.errors import FormatError, ValidationError
from solver.workloads.te import Topology, make_topology

_NS = "{http://graphml.graphdrawing.org/xmlns}"


def read_graphml(path, capacity: float = 1000.0) -> Topology:
    """A Topology Zoo GraphML file as a :class:`Topology` (largest SCC, ``capacity`` per direction).

    Raises:
        FormatError: not parseable GraphML, or an edge naming an unknown node.
    """
    path = Path(path)
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as err:
        raise FormatError(f"cannot parse GraphML: {err}", file=str(path)) from err
    graph = root.find(f"{_NS}graph")
    if graph is None:
        raise FormatError("no <graph> element", file=str(path))
    ids = [n.get("id") for n in graph.iter(f"{_NS}node")]
    pos = {k: i for i, k in enumerate(ids)}
    try:
        ends = np.array([(pos[e.get("source")], pos[e.get("target")]) for e in graph.iter(f"{_NS}edge")],
                        dtype=np.int64).reshape(-1, 2)
    except KeyError as err:
        raise FormatError(f"edge names unknown node {err}", file=str(path)) from err
    directed = graph.get("edgedefault", "undirected") == "directed"
    return make_topology(ids, ends[:, 0], ends[:, 1], np.full(len(ends), float(capacity)),
                         undirected=not directed, name=path.stem.removeprefix("pop_"))


def read_json_topology(path, capacity: float = 1000.0) -> Topology:
    """A node-link JSON topology (capacity from each link's ``capacity``, else ``capacity``).

    Raises:
        FormatError: unreadable JSON or missing ``nodes``/``links``.
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
        ids = [str(n["id"]) for n in doc["nodes"]]
        pos = {k: i for i, k in enumerate(ids)}
        links = doc["links"]
        src = np.array([pos[str(l_["source"])] for l_ in links], dtype=np.int64)
        dst = np.array([pos[str(l_["target"])] for l_ in links], dtype=np.int64)
        cap = np.array([float(l_.get("capacity", capacity)) for l_ in links])
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise FormatError(f"not a node-link topology: {err}", file=str(path)) from err
    return make_topology(ids, src, dst, cap, undirected=not doc.get("directed", False),
                         name=re.sub(r"^(pop|teal)_", "", path.stem))


def read_topology(path) -> Topology:
    """GraphML or JSON by extension."""
    return read_graphml(path) if str(path).lower().endswith(".graphml") else read_json_topology(path)


def read_tm(path) -> np.ndarray:
    """A dense traffic-matrix CSV as an (n, n) float array.

    Raises:
        FormatError: unreadable or not square. ValidationError: negative or non-finite entries.
    """
    try:
        tm = np.loadtxt(path, delimiter=",", ndmin=2)
    except (OSError, ValueError) as err:
        raise FormatError(f"cannot read traffic matrix: {err}", file=str(path)) from err
    if tm.shape[0] != tm.shape[1]:
        raise FormatError(f"traffic matrix is {tm.shape[0]} x {tm.shape[1]}, not square", file=str(path))
    if not np.all(np.isfinite(tm)) or (tm < 0).any():
        raise ValidationError("traffic matrix has a negative or non-finite entry", file=str(path))
    return tm


def tm_for_topology(tm: np.ndarray, topo: Topology) -> np.ndarray:
    """Restrict an id-indexed (N, N) matrix to the topology's nodes, in the topology's node order.

    Raises:
        ValidationError: a node id outside the matrix.
    """
    idx = np.array([int(x) for x in topo.labels.tolist()])
    if idx.max() >= tm.shape[0]:
        raise ValidationError(f"node id {idx.max()} is outside the {tm.shape[0]} x {tm.shape[0]} traffic matrix")
    return tm[np.ix_(idx, idx)]


def tm_sequence(folder) -> list[Path]:
    """Traffic-matrix CSVs of a folder in round order (by the ``_<k>_`` index in the file name)."""
    files = list(Path(folder).glob("*.csv"))

    def key(p: Path):
        m = re.search(r"_(\d+)_[\d.]+_traffic-matrix", p.name)
        return (int(m.group(1)) if m else 1 << 30, p.name)

    return sorted(files, key=key)
