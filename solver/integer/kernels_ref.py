"""Plain-numpy reference twins of :mod:`solver.integer.kernels` (tests compare the two).

Same decisions, but every trial move recomputes all row activity bounds from scratch with numpy
(O(nnz) per trial): slow and obviously right. Argument groups M/S as in ``kernels.py``; the twins
return new state arrays instead of mutating scratch space.
"""

from __future__ import annotations

import numpy as np


def activity_ref(M, dl: np.ndarray, du: np.ndarray):
    """(fmin, nmin, fmax, nmax) of every row over the domains [dl, du] (vectorized)."""
    cptr, cind, cval = M[0], M[1], M[2]
    m = M[6].shape[0]
    col = np.repeat(np.arange(dl.shape[0]), np.diff(cptr))
    a = cval
    lo_, up_ = dl[col], du[col]
    mn = np.where(a > 0, a * lo_, a * up_)
    mx = np.where(a > 0, a * up_, a * lo_)
    mni = mn == -np.inf
    mxi = mx == np.inf
    fmin = np.bincount(cind, weights=np.where(mni, 0.0, mn), minlength=m)
    fmax = np.bincount(cind, weights=np.where(mxi, 0.0, mx), minlength=m)
    nmin = np.bincount(cind, weights=mni.astype(np.float64), minlength=m).astype(np.int64)
    nmax = np.bincount(cind, weights=mxi.astype(np.float64), minlength=m).astype(np.int64)
    return fmin, nmin, fmax, nmax


def violation_ref(M, dl, du) -> np.ndarray:
    """(m,) distance of each row's activity interval from [row_lower, row_upper]."""
    rl, ru = M[6], M[7]
    fmin, nmin, fmax, nmax = activity_ref(M, dl, du)
    with np.errstate(invalid="ignore"):
        lowv = np.where(nmax == 0, rl - fmax, -np.inf)
        upv = np.where(nmin == 0, fmin - ru, -np.inf)
    return np.maximum(np.maximum(lowv, upv), 0.0)


def moved_domains(M, dl, du, j, v):
    """Domains after deciding column j to v, with its VUB children's upper bounds following."""
    up = M[12]
    pptr, pchild, qptr, qpar, qratio = M[14], M[15], M[17], M[18], M[19]
    dl2, du2 = dl.copy(), du.copy()
    dl2[j] = du2[j] = v
    for r in pchild[pptr[j]:pptr[j + 1]]:
        pars = qpar[qptr[r]:qptr[r + 1]]
        caps = qratio[qptr[r]:qptr[r + 1]] * np.where(pars == j, v, du[pars])
        ub = min(up[r], caps.min()) if caps.size else up[r]
        du2[r] = max(ub, dl[r])
    return dl2, du2


def _trial(M, dl, du, j, v, focus=-1):
    rtol, w = M[8], M[9]
    old = violation_ref(M, dl, du)
    dl2, du2 = moved_domains(M, dl, du, j, v)
    new = violation_ref(M, dl2, du2)
    inc = new - old
    worse = inc > rtol
    if focus >= 0:
        worse[focus] = False
    return int(worse.sum()), float(np.sum(w * inc)), dl2, du2, new


def decide_pass_ref(order, pref, alt, force, M, dl, du):
    """Twin of ``kernels.decide_pass``; returns (dl, du, decided, forced)."""
    dl, du = dl.copy(), du.copy()
    n_dec = n_forced = 0
    for j in order:
        if dl[j] == du[j]:
            continue
        a, b = pref[j], alt[j]
        nw, sa, *_ = _trial(M, dl, du, j, a)
        choice = None
        if nw == 0:
            choice = a
        else:
            nwb, sb = nw, sa
            if b != a:
                nwb, sb, *_ = _trial(M, dl, du, j, b)
            if nwb == 0:
                choice = b
            elif force:
                choice = a if sa <= sb else b
                n_forced += 1
        if choice is not None:
            dl, du = moved_domains(M, dl, du, j, choice)
            n_dec += 1
    return dl, du, n_dec, n_forced


def repair_pass_ref(max_moves, M, dl, du, tabu):
    """Twin of ``kernels.repair_pass``; returns (dl, du, tabu, moves, rows_left)."""
    rptr, rcol, rval = M[3], M[4], M[5]
    rl, ru, rtol = M[6], M[7], M[8]
    is_int, lo, up, cost = M[10], M[11], M[12], M[13]
    dl, du, tabu = dl.copy(), du.copy(), tabu.copy()
    viol = violation_ref(M, dl, du)
    queue = [int(i) for i in np.flatnonzero(viol > rtol)]
    inq = set(queue)
    moves = 0
    while queue and moves < max_moves:
        i = queue.pop(0)
        inq.discard(i)
        fmin, nmin, fmax, nmax = activity_ref(M, dl, du)
        lowside = nmax[i] == 0 and rl[i] - fmax[i] > rtol[i]
        upside = nmin[i] == 0 and fmin[i] - ru[i] > rtol[i]
        if not (lowside or upside):
            continue
        v_i = rl[i] - fmax[i] if lowside else fmin[i] - ru[i]
        need = 1.0 if lowside else -1.0
        best = None
        for k in range(rptr[i], rptr[i + 1]):
            j = rcol[k]
            if not is_int[j] or dl[j] != du[j]:
                continue
            a = rval[k]
            s = need if a > 0 else -need
            if tabu[j] == -s:
                continue
            cur = dl[j]
            room = up[j] - cur if s > 0 else cur - lo[j]
            if room < 1:
                continue
            step = min(max(np.ceil(v_i / abs(a) - 1e-9), 1.0), room)
            v = cur + s * step
            nworse, score, _, _, new = _trial(M, dl, du, j, v, focus=i)
            if new[i] >= v_i - 1e-12:
                continue
            strict = nworse == 0
            obj = cost[j] * (v - cur)
            if best is None:
                better = True
            elif strict and not best[2]:
                better = True
            elif strict == best[2]:
                if strict:
                    better = obj < best[3] - 1e-12 or (abs(obj - best[3]) <= 1e-12 and score < best[4])
                else:
                    better = score < best[4] - 1e-12 or (abs(score - best[4]) <= 1e-12 and obj < best[3])
            else:
                better = False
            if better:
                best = (j, v, strict, obj, score)
        if best is None:
            continue
        j, v = best[0], best[1]
        tabu[j] = 1 if v > dl[j] else -1
        old_du = du
        dl, du = moved_domains(M, dl, du, j, v)
        moves += 1
        new = violation_ref(M, dl, du)
        for r in _touched_rows(M, old_du, du, j):
            if r not in inq and new[r] > rtol[r]:
                queue.append(r)
                inq.add(r)
    left = int((violation_ref(M, dl, du) > rtol).sum())
    return dl, du, tabu, moves, left


def _touched_rows(M, old_du, new_du, j):
    """Rows of column j, then of each VUB child whose upper bound changed, first occurrence kept
    (the order in which the kernel stages them)."""
    cptr, cind, pptr, pchild = M[0], M[1], M[14], M[15]
    cols = [j] + [int(r) for r in pchild[pptr[j]:pptr[j + 1]] if new_du[r] != old_du[r]]
    seen, out = set(), []
    for c in cols:
        for r in cind[cptr[c]:cptr[c + 1]].tolist():
            if r not in seen:
                seen.add(r)
                out.append(r)
    return out


def fill_pass_ref(order, M, dl, du):
    """Twin of ``kernels.fill_pass``; returns (dl, du, changed, gain)."""
    lo, up, cost = M[11], M[12], M[13]
    dl, du = dl.copy(), du.copy()
    changed, gain = 0, 0.0
    for j in order:
        c = cost[j]
        if c == 0:
            continue
        s = -1.0 if c > 0 else 1.0
        step, moved = 1.0, False
        for _ in range(256):
            cur = dl[j]
            room = up[j] - cur if s > 0 else cur - lo[j]
            if room < 1:
                break
            k = step if step <= room else np.floor(room)
            nw, *_ = _trial(M, dl, du, j, cur + s * k)
            if nw == 0:
                dl, du = moved_domains(M, dl, du, j, cur + s * k)
                gain += c * s * k
                moved = True
                step *= 2.0
            elif k > 1:
                step = 1.0
            else:
                break
        changed += int(moved)
    return dl, du, changed, gain


def swap_pass_ref(cptr_rows, ccols, M, dl, du):
    """Twin of ``kernels.swap_pass``; returns (dl, du, swaps, gain)."""
    cost, pptr, rtol = M[13], M[14], M[8]
    dl, du = dl.copy(), du.copy()
    swaps, gain = 0, 0.0
    for c in range(cptr_rows.shape[0] - 1):
        mem = ccols[cptr_rows[c]:cptr_rows[c + 1]]
        if np.any(dl[mem] != du[mem]) or np.any(pptr[mem + 1] > pptr[mem]):
            continue
        ones = mem[dl[mem] == 1.0]
        if ones.size > 1:
            continue
        j = int(ones[0]) if ones.size else -1
        base = cost[j] if j >= 0 else 0.0
        best_k, best_g = -1, -1e-12
        old = violation_ref(M, dl, du)
        for k in mem:
            if k == j or dl[k] != 0.0:
                continue
            g = cost[k] - base
            if g >= best_g:
                continue
            dl2, du2 = (moved_domains(M, dl, du, j, 0.0) if j >= 0 else (dl, du))
            dl2, du2 = moved_domains(M, dl2, du2, k, 1.0)
            if not np.any(violation_ref(M, dl2, du2) - old > rtol):
                best_k, best_g = int(k), g
        if best_k >= 0:
            if j >= 0:
                dl, du = moved_domains(M, dl, du, j, 0.0)
            dl, du = moved_domains(M, dl, du, best_k, 1.0)
            swaps += 1
            gain += best_g
    return dl, du, swaps, gain
