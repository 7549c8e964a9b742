"""Real-data inputs for the Sia scenario: Sia's workload CSVs and its measured throughput profiles.

Workloads (``traces/sia/workloads/<set>/workload-<k>.csv``): ``name,time,application,num_replicas,
batch_size``; ``time`` is the submission time in seconds.

Throughput profiles (``traces/sia/throughput_profiles/<app>/``): per cluster type, ``placements-<c>.csv``
(``placement,local_bsz,step_time,sync_time``; the placement string has one digit per node = replicas on
that node) and ``scalability-<c>.csv`` (``num_nodes,num_replicas,local_bsz,step_time,sync_time``). Cluster
types per Sia's simulator config: aws = T4, azure = V100, dgx-ext = A100, quad = Quadro RTX 6000,
rtx = RTX 2080 Ti.

Goodput model used here: for every measured replica count g, the best throughput over batch sizes and
placements, ``g * local_bsz / step_time`` (samples/s; statistical efficiency, which Sia also models, is
left out); configurations of ``solver.workloads.sia.CONFIG_GPUS`` in between are interpolated in log-log,
beyond the largest measured count extrapolated with the last segment's scaling exponent clipped to
[0, 1]. The clusters are modelled with 8-GPU nodes like the synthetic default.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from solver.model.errors import FormatError, ValidationError
from solver.workloads.sia import CONFIG_GPUS, GoodputTable

CLUSTER_TYPES = {"aws": "T4", "azure": "V100", "dgx-ext": "A100", "quad": "RTX6000", "rtx": "RTX2080Ti"}
# Sia artifact's measured restart penalties (seconds) by application name
RESTART_SECONDS = {"deepspeech2": 25.0, "imagenet": 250.0, "cifar10": 30.0, "bert": 120.0, "yolov3": 45.0}


def _rows(path: Path) -> list[dict]:
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as err:
        raise FormatError(f"cannot read: {err}", file=str(path)) from err


def read_workload(path) -> dict:
    """A Sia workload CSV as arrays.

    Returns:
        dict with ``name`` (k,) str, ``time`` (k,) float seconds, ``application`` (k,) str,
        ``num_replicas`` (k,) int, ``batch_size`` (k,) int.
    Raises:
        FormatError: unreadable file or a missing column. ValidationError: a non-numeric or negative
            time/replica count (names the CSV line).
    """
    path = Path(path)
    rows = _rows(path)
    need = ("name", "time", "application", "num_replicas", "batch_size")
    if not rows or any(c not in rows[0] for c in need):
        raise FormatError(f"expected columns {','.join(need)}", file=str(path))
    out = {c: [r[c] for r in rows] for c in need}
    try:
        time = np.asarray(out["time"], dtype=float)
        reps = np.asarray(out["num_replicas"], dtype=float).astype(np.int64)
        bsz = np.asarray(out["batch_size"], dtype=float).astype(np.int64)
    except ValueError as err:
        raise ValidationError(f"non-numeric time/num_replicas/batch_size: {err}", file=str(path)) from err
    bad = np.flatnonzero(~np.isfinite(time) | (time < 0) | (reps < 1))
    if bad.size:
        raise ValidationError("negative or non-finite time, or num_replicas < 1", file=str(path),
                              line=int(bad[0]) + 2)
    return {"name": np.asarray(out["name"], dtype=object), "time": time,
            "application": np.asarray(out["application"], dtype=object), "num_replicas": reps, "batch_size": bsz}


def measured_throughput(app_dir: Path, cluster: str) -> dict[int, float]:
    """Best measured throughput (samples/s) per replica count for one application on one cluster type.

    Returns {} when the application has no profile for that cluster.
    """
    best: dict[int, float] = {}
    for kind in ("placements", "scalability"):
        path = app_dir / f"{kind}-{cluster}.csv"
        if not path.exists():
            continue
        for r in _rows(path):
            g = sum(int(ch) for ch in r["placement"]) if kind == "placements" else int(r["num_replicas"])
            t = g * float(r["local_bsz"]) / float(r["step_time"])
            if np.isfinite(t) and t > 0 and t > best.get(g, 0.0):
                best[g] = t
    return best


def interpolate(points: dict[int, float], gpus: np.ndarray = CONFIG_GPUS) -> np.ndarray:
    """Throughput on ``gpus`` GPUs from measured points (log-log interpolation, clipped extrapolation).

    Returns zeros when there are no points.
    """
    if not points:
        return np.zeros(gpus.size)
    g = np.array(sorted(points), dtype=float)
    t = np.array([points[k] for k in sorted(points)])
    t = np.maximum.accumulate(t)  # more GPUs never measured as slower than the best smaller count
    lg, lt, x = np.log(g), np.log(t), np.log(gpus.astype(float))
    out = np.interp(x, lg, lt)
    slope = np.clip((lt[-1] - lt[-2]) / (lg[-1] - lg[-2]), 0.0, 1.0) if g.size > 1 else 1.0
    hi = x > lg[-1]
    out[hi] = lt[-1] + slope * (x[hi] - lg[-1])
    lo = x < lg[0]
    out[lo] = lt[0] + (x[lo] - lg[0])
    return np.exp(out)


def read_profiles(profile_dir, apps, clusters=tuple(CLUSTER_TYPES)) -> GoodputTable:
    """A :class:`GoodputTable` for ``apps`` on ``clusters`` from Sia's throughput profiles.

    Raises:
        FormatError: the profile folder of an application is missing.
    """
    profile_dir = Path(profile_dir)
    tput = np.zeros((len(apps), len(clusters), CONFIG_GPUS.size))
    for a, app in enumerate(apps):
        d = profile_dir / app
        if not d.is_dir():
            raise FormatError(f"no throughput profile for application {app!r}", file=str(d))
        for c, cl in enumerate(clusters):
            tput[a, c] = interpolate(measured_throughput(d, cl))
    return GoodputTable(apps=tuple(apps), restart_seconds=np.array([RESTART_SECONDS.get(a, 30.0) for a in apps]),
                        types=tuple(CLUSTER_TYPES[c] for c in clusters), tput=tput)


def load_trace(workload_csv, profile_dir, trace_max_gpus: bool = False):
    """Arrivals and goodput table for :class:`solver.workloads.sia.SiaScenario` from Sia's files.

    Args:
        workload_csv: a workload CSV; profile_dir: the ``throughput_profiles`` folder.
        trace_max_gpus: cap every job at its ``num_replicas`` (default: up to 64 GPUs, Sia's configs).
    Returns:
        ``(arrivals, goodput)`` where arrivals = (times (k,), app index (k,), max GPUs (k,)).
    """
    w = read_workload(workload_csv)
    apps = tuple(sorted(set(w["application"].tolist())))
    gp = read_profiles(profile_dir, apps)
    idx = np.searchsorted(np.asarray(apps, dtype=object), w["application"])
    gmax = w["num_replicas"] if trace_max_gpus else np.full(idx.size, int(CONFIG_GPUS[-1]))
    return (w["time"], idx, gmax), gp


GAVEL_TYPES = {"k80": "K80", "p100": "P100", "v100": "V100"}


def read_gavel_throughputs(path) -> GoodputTable:
    """A :class:`GoodputTable` from Gavel's isolated throughputs (``*_isolated_flat.csv``).

    Rows ``gpu_type,job_type,scale_factor,isolated_throughput`` (steps/s of the whole job on
    ``scale_factor`` GPUs, consolidated placement; the ``*_unconsolidated`` types are skipped). Each job
    type becomes an application; 1, 2, 4, 8 GPUs are measured, larger configurations are extrapolated
    (:func:`interpolate`). Restart cost 30 s for every application (Sia's default).

    Raises:
        FormatError: unreadable file or missing columns. ValidationError: a non-numeric value.
    """
    path = Path(path)
    rows = _rows(path)
    need = ("gpu_type", "job_type", "scale_factor", "isolated_throughput")
    if not rows or any(c not in rows[0] for c in need):
        raise FormatError(f"expected columns {','.join(need)}", file=str(path))
    rows = [r for r in rows if r["gpu_type"] in GAVEL_TYPES]
    apps = tuple(sorted({r["job_type"] for r in rows}))
    types = tuple(GAVEL_TYPES)
    points: dict = {}
    for line, r in enumerate(rows):
        try:
            g, t = int(r["scale_factor"]), float(r["isolated_throughput"])
        except ValueError as err:
            raise ValidationError(f"non-numeric value: {err}", file=str(path), line=line + 2) from err
        if np.isfinite(t) and t > 0:
            points.setdefault((r["job_type"], r["gpu_type"]), {})[g] = t
    tput = np.zeros((len(apps), len(types), CONFIG_GPUS.size))
    for a, app in enumerate(apps):
        for c, ty in enumerate(types):
            tput[a, c] = interpolate(points.get((app, ty), {}))
    return GoodputTable(apps=apps, restart_seconds=np.full(len(apps), 30.0),
                        types=tuple(GAVEL_TYPES[t] for t in types), tput=tput)
