"""GPU cluster scheduling in Sia's formulation (Jayaram Subramanya et al., SOSP 2023), round by round.

Cluster: GPU types with nodes of 8 GPUs; capacity ``cap[t]`` GPUs per type. Configurations per type
(Sia's ``CONFIGS_8GPU``): 1, 2, 4, 8 GPUs inside one node, then n whole nodes (16, 24, ..., 64 GPUs);
a configuration larger than its type's capacity or than the job's maximum is left out.

MILP over binary ``x[j, c]`` (job j runs in configuration c), with normalized goodput ``G[j, c]`` (each
job's row divided by its minimum over its configurations, so the smallest is 1), restart factor
``r[j, c]`` and fairness power p:

- maximization form (COpter's variant, default, p = 0.5)::

      maximize  sum x[j,c] * ((r G)^p + 1.1) - 1.1 * J
      (= sum x (rG)^p - 1.1 * number of jobs left unallocated)

- minimization form (Sia's own, p = -0.5)::

      minimize  sum x[j,c] * ((r G)^p - 1.1) + 1.1 * J
      (= sum x (rG)^p + 1.1 * number of jobs left unallocated)

  subject to ``j<id>/one``: sum_c x[j, c] <= 1 (one configuration per job) and ``gpus/<type>``:
  sum_{j, c of type t} gpus(c) x[j, c] <= cap[t].

Restart factor (Sia artifact, Pollux's re-allocation factor): r = 1 on the job's current configuration
and for a job that is not running or is younger than its restart cost S; otherwise, on every other
configuration, r = max(age - N S, 0) / (age + S) with N the job's restarts so far, floored at 1e-4
(Sia's ZERO_ALLOC_GAIN, which also keeps p < 0 finite).

Rounds of 60 s: the previous round's allocation (given, or simulated by a vectorized greedy) makes
each allocated job progress by ``G[j, c] * (60 s - S if it restarted)``; jobs whose remaining work
reaches 0 finish (their columns and ``j<id>/one`` row are dropped), new jobs arrive (their columns,
row and coefficients are added), every surviving job's costs are refreshed (age, restarts).

Built-in synthetic goodput model (no data files): 7 GPU types with relative speeds
``TYPE_SPEED`` and 7 application archetypes. Throughput of application a on g GPUs of type t spread
over k nodes is ``speed[t] ** affinity[a] * g / (1 + alpha[a] (g - 1)) * beta[a] ** log2(k)``
(Amdahl-style scaling, a per-node communication penalty, type affinity so that applications gain
differently from faster GPUs), times a per-(job, type) log-normal noise of sigma 0.1. Restart costs per
application are Sia's measured 25-250 s. Scale knob: total GPUs (64, 1024, 10240, 25600, ...), split
evenly over the types in whole nodes; the default number of concurrent jobs follows COpter's sizes
(500 jobs at 1,024 GPUs, 3,000 at 10,240, 7,000 at 25,600). ``config_gpus=fine_configs()`` switches to
a finer configuration set (every count 1..8, then every whole node up to 512 GPUs: 497 configurations per
job on 7 types, about 3.5 million variables at 25,600 GPUs), as in COpter's largest experiments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solver.model.delta import Delta
from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.workloads.common import ROUND_SECONDS, Scenario, changed, csc_problem, join_names

GPUS_PER_NODE = 8
CONFIG_GPUS = np.array([1, 2, 4, 8, 16, 24, 32, 40, 48, 56, 64], dtype=np.int64)
GPU_TYPES = ("K80", "P100", "T4", "RTX", "V100", "A100", "H100")
TYPE_SPEED = np.array([0.35, 0.6, 0.5, 0.8, 1.0, 2.0, 3.2])
# order in which leftover nodes go to types when nodes do not divide evenly
_EXTRA_NODE_ORDER = ("V100", "A100", "T4", "RTX", "P100", "H100", "K80")
ZERO_ALLOC_GAIN = 1e-4
UNALLOCATED_PENALTY = 1.1
# application archetypes: name, Amdahl alpha, per-node penalty beta, type affinity, restart cost (s)
SYNTHETIC_APPS = (
    ("cifar10", 0.10, 0.80, 0.6, 30.0),
    ("imagenet", 0.02, 0.90, 1.1, 250.0),
    ("bert", 0.03, 0.85, 1.0, 120.0),
    ("deepspeech2", 0.05, 0.85, 0.9, 25.0),
    ("yolov3", 0.04, 0.88, 0.8, 45.0),
    ("ncf", 0.15, 0.75, 0.5, 30.0),
    ("gpt", 0.01, 0.92, 1.2, 120.0),
)
_DEFAULT_JOBS = ((64, 24), (1024, 500), (10240, 3000), (25600, 7000))


def default_jobs(total_gpus: int) -> int:
    """Concurrent jobs for a cluster size: log-log interpolation of (64, 24), (1024, 500),
    (10240, 3000), (25600, 7000) (COpter's sizes), proportional beyond the ends."""
    g = np.array([a for a, _ in _DEFAULT_JOBS], dtype=float)
    j = np.array([b for _, b in _DEFAULT_JOBS], dtype=float)
    if total_gpus <= g[0]:
        return max(2, int(round(j[0] * total_gpus / g[0])))
    if total_gpus >= g[-1]:
        return int(round(j[-1] * total_gpus / g[-1]))
    return int(round(np.exp(np.interp(np.log(total_gpus), np.log(g), np.log(j)))))


@dataclass
class GoodputTable:
    """Throughput per (application, GPU type, GPU count) in any consistent unit (normalized per job later).

    Attributes:
        apps: (A,) application names.
        restart_seconds: (A,) restart cost S per application (seconds).
        types: (T,) GPU type names.
        tput: (A, T, K) throughput on ``gpus[k]`` GPUs; 0 where the configuration is unavailable.
        type_weight: (T,) relative share of nodes per type when splitting a cluster (default equal).
        gpus: (K,) GPU counts of the configurations (default ``CONFIG_GPUS``; see :func:`fine_configs`).
    """

    apps: tuple
    restart_seconds: np.ndarray
    types: tuple
    tput: np.ndarray
    type_weight: np.ndarray | None = None
    gpus: np.ndarray = field(default_factory=lambda: CONFIG_GPUS.copy())


def fine_configs(max_gpus: int = 512) -> np.ndarray:
    """A finer configuration set (as in COpter's large experiments): every count 1..8 in one node, then
    every whole number of nodes up to ``max_gpus`` GPUs (71 per type at 512, i.e. 497 per job on 7 types).

    Raises:
        UsageError: max_gpus below 8 or not a multiple of 8.
    """
    if max_gpus < GPUS_PER_NODE or max_gpus % GPUS_PER_NODE:
        raise UsageError(f"max_gpus must be a multiple of {GPUS_PER_NODE}, got {max_gpus}")
    return np.r_[np.arange(1, GPUS_PER_NODE + 1), np.arange(2 * GPUS_PER_NODE, max_gpus + 1, GPUS_PER_NODE)]


def synthetic_goodput(gpus: np.ndarray = CONFIG_GPUS) -> GoodputTable:
    """The built-in goodput model (module docstring): 7 application archetypes x 7 GPU types, on the
    configurations ``gpus`` (K,) GPU counts (counts above 8 must be whole nodes)."""
    gpus = np.asarray(gpus, dtype=np.int64)
    names = tuple(a[0] for a in SYNTHETIC_APPS)
    alpha = np.array([a[1] for a in SYNTHETIC_APPS])[:, None, None]
    beta = np.array([a[2] for a in SYNTHETIC_APPS])[:, None, None]
    aff = np.array([a[3] for a in SYNTHETIC_APPS])[:, None, None]
    g = gpus.astype(float)[None, None, :]
    nodes = np.maximum(1.0, g / GPUS_PER_NODE)
    tput = TYPE_SPEED[None, :, None] ** aff * g / (1.0 + alpha * (g - 1.0)) * beta ** np.log2(nodes)
    return GoodputTable(apps=names, restart_seconds=np.array([a[4] for a in SYNTHETIC_APPS]),
                        types=GPU_TYPES, tput=tput, gpus=gpus.copy())


def split_nodes(total_gpus: int, types: tuple, weight: np.ndarray | None = None) -> np.ndarray:
    """GPUs per type: ``total_gpus // 8`` nodes split by ``weight`` (largest remainder), times 8.

    Raises:
        UsageError: fewer than 8 GPUs in total.
    """
    nodes = int(total_gpus) // GPUS_PER_NODE
    if nodes < 1:
        raise UsageError(f"a Sia cluster needs at least {GPUS_PER_NODE} GPUs, got {total_gpus}")
    w = np.ones(len(types)) if weight is None else np.asarray(weight, dtype=float)
    share = nodes * w / w.sum()
    base = np.floor(share).astype(np.int64)
    left = nodes - int(base.sum())
    pref = [types.index(t) for t in _EXTRA_NODE_ORDER if t in types] + \
        [i for i, t in enumerate(types) if t not in _EXTRA_NODE_ORDER]
    order = sorted(range(len(types)), key=lambda i: (-(share[i] - base[i]), pref.index(i)))
    base[order[:left]] += 1
    return base * GPUS_PER_NODE


@dataclass
class _Jobs:
    """Column-store of the active jobs (sorted by id, which is also arrival order)."""

    id: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    app: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    arrival: np.ndarray = field(default_factory=lambda: np.zeros(0))
    restarts: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    ever_ran: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    work: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cur: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    max_gpus: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    noise: np.ndarray | None = None  # (J, T)

    def __len__(self) -> int:
        return int(self.id.shape[0])

    def take(self, mask: np.ndarray) -> _Jobs:
        return _Jobs(**{k: v[mask] for k, v in self.__dict__.items()})

    def append(self, other: _Jobs) -> _Jobs:
        return _Jobs(**{k: np.concatenate([v, getattr(other, k)]) for k, v in self.__dict__.items()})


class SiaScenario(Scenario):
    """Sia GPU scheduling rounds (module docstring). Deterministic for ``seed``.

    Args:
        total_gpus: cluster size (scale knob), split over the types in 8-GPU nodes.
        jobs: concurrent jobs at round 0 (default :func:`default_jobs`).
        form: ``"max"`` (p = 0.5, maximize) or ``"min"`` (Sia's p = -0.5, minimize).
        p: override the fairness power.
        goodput: a :class:`GoodputTable` (default :func:`synthetic_goodput` on ``config_gpus``).
        config_gpus: (K,) configuration GPU counts for the synthetic model (default ``CONFIG_GPUS``;
            :func:`fine_configs` reaches millions of variables at 25,600 GPUs).
        arrivals: optional trace ``(times_s, app_index, max_gpus)`` of (k,) arrays replacing the
            synthetic Poisson arrivals (times relative to the start; jobs with time <= 0 are present
            at round 0).
        mean_life_rounds: mean job lifetime in rounds at a typical allocation (synthetic work model).
        seed: RNG seed.
    Raises:
        UsageError: unknown form, fewer than 8 GPUs.
    """

    domain = "sia"

    def __init__(self, total_gpus: int = 256, jobs: int | None = None, form: str = "max",
                 p: float | None = None, goodput: GoodputTable | None = None, arrivals=None,
                 mean_life_rounds: float = 40.0, seed: int = 0, config_gpus=None):
        super().__init__()
        if form not in ("max", "min"):
            raise UsageError(f"Sia form must be 'max' or 'min', got {form!r}")
        self.form = form
        self.p = float(p if p is not None else (0.5 if form == "max" else -0.5))
        self.sense = -1 if form == "max" else 1
        self.rng = np.random.default_rng(seed)
        if goodput is not None and config_gpus is not None:
            raise UsageError("config_gpus applies to the synthetic goodput model; a goodput table has its own")
        self.gp = goodput or synthetic_goodput(CONFIG_GPUS if config_gpus is None else config_gpus)
        self.total_gpus = int(total_gpus)
        caps = split_nodes(self.total_gpus, self.gp.types, self.gp.type_weight)
        keep = caps > 0
        self.types = tuple(t for t, k in zip(self.gp.types, keep, strict=True) if k)
        self.type_src = np.flatnonzero(keep)  # index into gp.types / tput axis 1
        self.caps = caps[keep].astype(float)
        # global configuration list: (type position, gpus index) with gpus <= capacity of the type
        self.gpus = np.asarray(self.gp.gpus, dtype=np.int64)
        if self.gpus.size != self.gp.tput.shape[2] or ((self.gpus > GPUS_PER_NODE) & (self.gpus % GPUS_PER_NODE != 0)).any():
            raise UsageError("goodput table's GPU counts must match its throughput axis, and counts above "
                             f"{GPUS_PER_NODE} must be whole nodes")
        tt, kk = np.meshgrid(np.arange(len(self.types)), np.arange(self.gpus.size), indexing="ij")
        tt, kk = tt.ravel(), kk.ravel()
        ok = self.gpus[kk] <= self.caps[tt]
        self.cfg_type, self.cfg_k = tt[ok], kk[ok]
        self.cfg_gpus = self.gpus[self.cfg_k].astype(float)
        self.cfg_label = join_names(np.asarray(self.types, dtype=object)[self.cfg_type], "/",
                                    self.gpus[self.cfg_k])
        self.n_jobs_target = int(jobs) if jobs is not None else default_jobs(self.total_gpus)
        self.mean_life = float(mean_life_rounds)
        self.time = 3600.0  # simulated seconds at round 0
        self.next_id = 0
        self.trace = None
        if arrivals is not None:
            t, a, g = (np.asarray(v) for v in arrivals)
            order = np.argsort(t, kind="stable")
            self.trace = (t[order].astype(float), a[order].astype(np.int64), g[order].astype(np.int64))
            self.trace_pos = 0
            n0 = max(1, min(self.n_jobs_target if jobs is not None else 1, t.size))
            self.time = float(self.trace[0][n0 - 1]) if t.size else 0.0
            self.jobs = self._arrive(self.time)
        else:
            self.jobs = self._new_jobs(self.n_jobs_target, self.time - self.rng.uniform(0, 3600, self.n_jobs_target))
        self._refresh()
        # round-0 history: a greedy allocation with r = 1 becomes the jobs' current configurations
        alloc = self._greedy(self._value)
        run = alloc >= 0
        self.jobs.cur = alloc
        self.jobs.ever_ran = run
        age = self.time - self.jobs.arrival
        self.jobs.restarts = np.where(run, self.rng.poisson(age / 1800.0), 0)
        self._refresh()
        self._names = self._build_names(self.jobs, self._mask)

    # ------------------------------------------------------------------ job creation
    def _new_jobs(self, k: int, arrival: np.ndarray, app=None, max_gpus=None) -> _Jobs:
        A = len(self.gp.apps)
        app = self.rng.integers(0, A, k) if app is None else np.asarray(app, dtype=np.int64)
        noise = np.exp(0.1 * self.rng.standard_normal((k, len(self.types))))
        max_g = np.full(k, int(self.gpus[-1])) if max_gpus is None else np.asarray(max_gpus, dtype=np.int64)
        life = self.rng.lognormal(np.log(self.mean_life * 0.75), 0.75, k)
        ids = np.arange(self.next_id, self.next_id + k, dtype=np.int64)
        self.next_id += k
        jobs = _Jobs(id=ids, app=app, arrival=np.asarray(arrival, dtype=float), restarts=np.zeros(k, dtype=np.int64),
                     ever_ran=np.zeros(k, dtype=bool), work=np.zeros(k), cur=np.full(k, -1, dtype=np.int64),
                     max_gpus=max_g, noise=noise)
        G, mask = self._goodput(jobs)
        # work: lifetime (rounds) x 60 s at the job's goodput on its median valid configuration
        Gm = np.where(mask, G, np.nan)
        typical = np.nan_to_num(np.nanmedian(np.where(mask.any(1)[:, None], Gm, 1.0), axis=1), nan=1.0)
        jobs.work = life * ROUND_SECONDS * typical
        return jobs

    def _arrive(self, t: float) -> _Jobs:
        """New jobs arriving up to time t: the trace's, or Poisson(target / life) synthetic arrivals."""
        if self.trace is not None:
            times, apps, gmax = self.trace
            end = int(np.searchsorted(times, t, side="right"))
            sl = slice(self.trace_pos, end)
            self.trace_pos = end
            return self._new_jobs(end - sl.start, times[sl], apps[sl], np.minimum(gmax[sl], self.gpus[-1]))
        k = int(self.rng.poisson(self.n_jobs_target / self.mean_life))
        return self._new_jobs(k, np.sort(self.rng.uniform(t - ROUND_SECONDS, t, k)))

    # ------------------------------------------------------------------ model pieces
    def _goodput(self, jobs: _Jobs) -> tuple[np.ndarray, np.ndarray]:
        """(J, C) normalized goodput and (J, C) validity mask of every job x configuration."""
        raw = self.gp.tput[jobs.app[:, None], self.type_src[self.cfg_type][None, :], self.cfg_k[None, :]]
        raw = raw * jobs.noise[:, self.cfg_type]
        mask = (raw > 0) & (self.cfg_gpus[None, :] <= jobs.max_gpus[:, None])
        lo = np.where(mask, raw, np.inf).min(axis=1, keepdims=True)
        G = np.where(mask, raw / np.where(np.isfinite(lo), lo, 1.0), 0.0)
        return np.maximum(G, np.where(mask, ZERO_ALLOC_GAIN, 0.0)), mask

    def _restart_factor(self) -> np.ndarray:
        """(J,) factor applied to every configuration but the job's current one."""
        j = self.jobs
        S = self.gp.restart_seconds[j.app]
        age = self.time - j.arrival
        rf = np.maximum(age - j.restarts * S, 0.0) / (age + S)
        rf = np.where((j.cur < 0) | (age < S), 1.0, rf)
        return np.maximum(rf, ZERO_ALLOC_GAIN)

    def _refresh(self) -> None:
        """Recompute goodput, mask, costs (J, C) of the current jobs at the current time."""
        self._G, self._mask = self._goodput(self.jobs)
        r = np.repeat(self._restart_factor()[:, None], self.cfg_type.size, axis=1)
        run = self.jobs.cur >= 0
        r[np.flatnonzero(run), self.jobs.cur[run]] = 1.0
        u = np.maximum(r * self._G, ZERO_ALLOC_GAIN) ** self.p
        self._cost = u + UNALLOCATED_PENALTY if self.form == "max" else u - UNALLOCATED_PENALTY
        self._value = np.where(self._mask, self._cost * -self.sense, -np.inf)  # larger = better

    def _greedy(self, value: np.ndarray) -> np.ndarray:
        """A feasible allocation, vectorized: (J,) configuration index per job or -1.

        Passes with a growing per-job GPU limit (starting at the fair share): each unassigned job
        proposes its best configuration that fits the remaining capacity; proposals are accepted
        in decreasing value per GPU while each type's running total fits.
        """
        J = value.shape[0]
        alloc = np.full(J, -1, dtype=np.int64)
        if J == 0:
            return alloc
        remaining = self.caps.copy()
        limit = max(1.0, self.caps.sum() / J)
        for _ in range(12):
            free = alloc < 0
            fits = (self.cfg_gpus[None, :] <= remaining[self.cfg_type][None, :]) & (self.cfg_gpus <= limit)[None, :]
            v = np.where(fits & (value > 0) & free[:, None], value, -np.inf)
            best = np.argmax(v, axis=1)
            cand = np.flatnonzero(np.isfinite(v[np.arange(J), best]))
            if cand.size:
                c = best[cand]
                order = np.lexsort((cand, -v[cand, c] / self.cfg_gpus[c], self.cfg_type[c]))
                cand, c = cand[order], c[order]
                t = self.cfg_type[c]
                csum = np.cumsum(self.cfg_gpus[c])
                starts = np.r_[0, np.flatnonzero(np.diff(t)) + 1]
                first = np.repeat(starts, np.diff(np.r_[starts, t.size]))
                used = csum - np.r_[0.0, csum][first]
                ok = used <= remaining[t]
                alloc[cand[ok]] = c[ok]
                np.subtract.at(remaining, t[ok], self.cfg_gpus[c[ok]])
            if limit >= self.gpus[-1] and (cand.size == 0):
                break
            limit = min(2 * limit, float(self.gpus[-1]))
        return alloc

    # ------------------------------------------------------------------ problem building
    def _build_names(self, jobs: _Jobs, mask: np.ndarray) -> np.ndarray:
        jj, cc = np.nonzero(mask)
        return join_names("j", jobs.id[jj], "/", self.cfg_label[cc])

    def current_col_names(self) -> np.ndarray:
        return self._names

    def _offset(self) -> float:
        sign = -1.0 if self.form == "max" else 1.0  # -1.1 J (max form) or +1.1 J (min form)
        return sign * UNALLOCATED_PENALTY * len(self.jobs)

    def problem(self) -> Problem:
        """The MILP of the current round (columns job-major in job-id order, rows: types then jobs)."""
        jj, cc = np.nonzero(self._mask)
        n, T = jj.size, len(self.types)
        indices = np.empty(2 * n, dtype=np.int64)
        indices[0::2] = self.cfg_type[cc]
        indices[1::2] = T + jj
        data = np.empty(2 * n)
        data[0::2] = self.cfg_gpus[cc]
        data[1::2] = 1.0
        row_names = np.concatenate([join_names("gpus/", np.asarray(self.types, dtype=object)),
                                    join_names("j", self.jobs.id, "/one")])
        m = row_names.size
        return csc_problem(
            cost=self._cost[jj, cc], col_lower=np.zeros(n), col_upper=np.ones(n), integrality=np.ones(n, bool),
            row_lower=np.full(m, -np.inf), row_upper=np.concatenate([self.caps, np.ones(len(self.jobs))]),
            indptr=np.arange(0, 2 * n + 1, 2), indices=indices, data=data, col_names=self._names,
            row_names=row_names, sense=self.sense, offset=self._offset(),
            name=f"sia-{self.total_gpus}gpus-{self.form}-round{self.round}")

    # ------------------------------------------------------------------ one round
    def allocation(self, x: np.ndarray | None) -> np.ndarray:
        """(J,) configuration per job from a previous solution (argmax > 0.5) or the greedy (x None)."""
        if x is None:
            return self._greedy(self._value)
        jj, cc = np.nonzero(self._mask)
        best_val = np.zeros(len(self.jobs))
        alloc = np.full(len(self.jobs), -1, dtype=np.int64)
        order = np.lexsort((x, jj))  # per job ascending value: the last one per job is its argmax
        last = np.r_[np.flatnonzero(np.diff(jj[order])), order.size - 1] if order.size else order
        pick = order[last]
        best_val[jj[pick]] = x[pick]
        alloc[jj[pick]] = cc[pick]
        alloc[best_val <= 0.5] = -1
        return alloc

    def _advance(self, x: np.ndarray | None) -> Delta:
        old_jobs, old_cost, old_mask, old_names, old_off = self.jobs, self._cost, self._mask, self._names, self._offset()
        alloc = self.allocation(x)
        j = self.jobs
        run = alloc >= 0
        moved = run & (alloc != j.cur)
        S = self.gp.restart_seconds[j.app]
        j.restarts = j.restarts + (moved & j.ever_ran)
        seconds = np.where(moved, np.maximum(ROUND_SECONDS - S, 0.0), ROUND_SECONDS)
        gain = np.where(run, self._G[np.arange(len(j)), np.maximum(alloc, 0)], 0.0)
        j.work = j.work - gain * seconds
        j.ever_ran = j.ever_ran | run
        j.cur = alloc
        self.time += ROUND_SECONDS
        alive = j.work > 0
        self.jobs = j.take(alive).append(self._arrive(self.time))
        self._refresh()

        # ---- diff against the previous round (old columns of surviving jobs keep their order)
        keep_col = np.repeat(alive, old_mask.sum(axis=1))
        n_keep = int(keep_col.sum())
        new_jobs = self.jobs.take(np.arange(len(self.jobs)) >= int(alive.sum()))
        new_mask = self._mask[int(alive.sum()):]
        new_names = self._build_names(new_jobs, new_mask)
        self._names = np.concatenate([old_names[keep_col], new_names])
        jj, cc = np.nonzero(self._mask)
        cost = self._cost[jj, cc]
        chg = np.flatnonzero(changed(old_cost[np.nonzero(old_mask)][keep_col], cost[:n_keep]))
        parts = [Delta.drop_cons(join_names("j", old_jobs.id[~alive], "/one")) if (~alive).any() else None,
                 Delta.drop_vars(old_names[~keep_col]) if (~keep_col).any() else None,
                 Delta.vars(self._names[chg], cost=cost[chg]) if chg.size else None]
        if new_names.size or len(new_jobs):
            nj, nc = np.nonzero(new_mask)
            parts.append(Delta.vars(new_names, cost=cost[n_keep:], lower=np.zeros(nj.size),
                                    upper=np.ones(nj.size), integer=np.ones(nj.size, dtype=bool)))
            parts.append(Delta.cons(join_names("j", new_jobs.id, "/one"), upper=np.ones(len(new_jobs))))
            type_rows = join_names("gpus/", np.asarray(self.types, dtype=object)[self.cfg_type[nc]])
            one_rows = join_names("j", new_jobs.id[nj], "/one")
            parts.append(Delta.coefs(np.concatenate([new_names, new_names]),
                                     np.concatenate([type_rows, one_rows]),
                                     np.concatenate([self.cfg_gpus[nc], np.ones(nj.size)])))
        off = self._offset()
        return Delta.concat([p for p in parts if p is not None], offset=off if off != old_off else None)
