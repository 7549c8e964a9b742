"""Numba kernels of the integerization heuristics: decide (round), repair and fill moves with incremental
row-activity bounds.

State model (a light "fix-and-propagate", cf. Berthold & Hendel, "Shift-and-propagate", J. Heuristics 2015,
and the activity-based bound reasoning of MIP presolve): every column j has a current domain
[dl[j], du[j]] (an integer column is *decided* when dl == du; continuous columns keep their bounds,
except children of variable-upper-bound links, whose upper bound follows their binary parents). Every
row i keeps its minimum and maximum activity over these domains, split into a finite part
(``fmin``/``fmax``) and a count of infinite contributions (``nmin``/``nmax``) so that infinite bounds
can be added and removed exactly. The *violation* of a row is the distance between its activity
interval and [row_lower, row_upper] (0 when some point of the domains could satisfy it); when every
integer column is decided, rows with only integer columns are checked exactly.

A move changes one integer column (and the upper bounds of its VUB children); its effect is staged
per touched row through the CSC column, evaluated (did any row's violation grow by more than its
tolerance? weighted sum of violation changes), then committed or discarded: cost O(nonzeros of the
moved columns). ``kernels_ref.py`` holds plain-numpy twins (full recomputation) that the tests compare.

Argument groups (all numpy arrays, shapes: n columns, m rows):
  model M  = (cptr (n+1,), cind (nnz,), cval (nnz,), rptr (m+1,), rcol (nnz,), rval (nnz,),
              rl (m,), ru (m,), rtol (m,), w (m,), is_int (n,) bool, lo (n,), up (n,), cost (n,),
              pptr (n+1,), pchild, pratio, qptr (n+1,), qpar, qratio)
  state S  = (dl (n,), du (n,), fmin (m,), nmin (m,) int64, fmax (m,), nmax (m,) int64)
  scratch W = (sfmin (m,), snmin (m,) int64, sfmax (m,), snmax (m,) int64, touched (m,) int64,
              mark (m,) bool, stv (K,) int64, stl (K,), stu (K,), cnt (2,) int64 [n_touched, n_staged])
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver import kernel_cache

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)

INF = np.inf


@njit(cache=True)
def _contrib(a, lo, up):
    """Min/max contribution of coefficient a over [lo, up]: (min_finite, min_is_inf, max_finite, max_is_inf)."""
    if a > 0:
        mn = a * lo
        mx = a * up
    else:
        mn = a * up
        mx = a * lo
    mni = 0
    mxi = 0
    if mn == -INF:
        mn = 0.0
        mni = 1
    if mx == INF:
        mx = 0.0
        mxi = 1
    return mn, mni, mx, mxi


@njit(cache=True)
def row_violation(rl, ru, fmin, nmin, fmax, nmax):
    """Distance between the activity interval and [rl, ru] (0 if they meet)."""
    v = 0.0
    if nmax == 0 and rl - fmax > v:
        v = rl - fmax
    if nmin == 0 and fmin - ru > v:
        v = fmin - ru
    return v


@njit(cache=True)
def _stage_col(j, newl, newu, M, S, W):
    cptr, cind, cval = M[0], M[1], M[2]
    dl, du = S[0], S[1]
    sfmin, snmin, sfmax, snmax, touched, mark, stv, stl, stu, cnt = W
    for k in range(cptr[j], cptr[j + 1]):
        i = cind[k]
        a = cval[k]
        o0, o1, o2, o3 = _contrib(a, dl[j], du[j])
        n0, n1, n2, n3 = _contrib(a, newl, newu)
        sfmin[i] += n0 - o0
        snmin[i] += n1 - o1
        sfmax[i] += n2 - o2
        snmax[i] += n3 - o3
        if not mark[i]:
            mark[i] = True
            touched[cnt[0]] = i
            cnt[0] += 1
    s = cnt[1]
    stv[s] = j
    stl[s] = newl
    stu[s] = newu
    cnt[1] = s + 1


@njit(cache=True)
def _stage_move(j, v, M, S, W):
    """Stage: integer column j decided to value v, VUB children's upper bounds follow."""
    up = M[12]
    pptr, pchild, qptr, qpar, qratio = M[14], M[15], M[17], M[18], M[19]
    dl, du = S[0], S[1]
    _stage_col(j, v, v, M, S, W)
    for k in range(pptr[j], pptr[j + 1]):
        r = pchild[k]
        ub = up[r]
        for t in range(qptr[r], qptr[r + 1]):
            p = qpar[t]
            pu = v if p == j else du[p]
            cap = qratio[t] * pu
            if cap < ub:
                ub = cap
        if ub < dl[r]:
            ub = dl[r]
        if ub != du[r]:
            _stage_col(r, dl[r], ub, M, S, W)


@njit(cache=True)
def _evaluate(M, S, W, focus):
    """(rows whose violation grows beyond tolerance, excluding ``focus``; weighted violation change)."""
    rl, ru, rtol, w = M[6], M[7], M[8], M[9]
    fmin, nmin, fmax, nmax = S[2], S[3], S[4], S[5]
    sfmin, snmin, sfmax, snmax, touched, mark, stv, stl, stu, cnt = W
    nworse = 0
    score = 0.0
    for t in range(cnt[0]):
        i = touched[t]
        old = row_violation(rl[i], ru[i], fmin[i], nmin[i], fmax[i], nmax[i])
        new = row_violation(rl[i], ru[i], fmin[i] + sfmin[i], nmin[i] + snmin[i],
                            fmax[i] + sfmax[i], nmax[i] + snmax[i])
        inc = new - old
        if inc > rtol[i] and i != focus:
            nworse += 1
        score += w[i] * inc
    return nworse, score


@njit(cache=True)
def _discard(W):
    sfmin, snmin, sfmax, snmax, touched, mark, stv, stl, stu, cnt = W
    for t in range(cnt[0]):
        i = touched[t]
        sfmin[i] = 0.0
        snmin[i] = 0
        sfmax[i] = 0.0
        snmax[i] = 0
        mark[i] = False
    cnt[0] = 0
    cnt[1] = 0


@njit(cache=True)
def _commit(S, W):
    dl, du, fmin, nmin, fmax, nmax = S
    sfmin, snmin, sfmax, snmax, touched, mark, stv, stl, stu, cnt = W
    for t in range(cnt[0]):
        i = touched[t]
        fmin[i] += sfmin[i]
        nmin[i] += snmin[i]
        fmax[i] += sfmax[i]
        nmax[i] += snmax[i]
    for s in range(cnt[1]):
        dl[stv[s]] = stl[s]
        du[stv[s]] = stu[s]
    _discard(W)


@njit(cache=True)
def _try(j, v, M, S, W, focus):
    _stage_move(j, v, M, S, W)
    nworse, score = _evaluate(M, S, W, focus)
    _discard(W)
    return nworse, score


@njit(cache=True)
def decide_pass(order, pref, alt, force, M, S, W):
    """Decide the integer columns of ``order`` (int64, in that order) that are not yet decided.

    Each takes ``pref[j]`` if no row's violation grows, else ``alt[j]`` if no row's violation grows;
    with ``force`` a column for which neither is acceptable takes the one with the smaller weighted
    violation growth (the repair step handles it), otherwise it stays undecided.

    Returns:
        (decided, forced): counts.
    """
    dl, du = S[0], S[1]
    n_dec = 0
    n_forced = 0
    for t in range(order.shape[0]):
        j = order[t]
        if dl[j] == du[j]:
            continue
        a = pref[j]
        b = alt[j]
        nw, sa = _try(j, a, M, S, W, -1)
        choice = np.nan
        if nw == 0:
            choice = a
        else:
            sb = sa
            nwb = nw
            if b != a:
                nwb, sb = _try(j, b, M, S, W, -1)
            if nwb == 0:
                choice = b
            elif force:
                choice = a if sa <= sb else b
                n_forced += 1
        if choice == choice:  # not nan
            _stage_move(j, choice, M, S, W)
            _commit(S, W)
            n_dec += 1
    return n_dec, n_forced


@njit(cache=True)
def repair_pass(max_moves, M, S, W, tabu):
    """Repair violated rows by moving integer columns (all decided) until no row is violated.

    For a violated row, every integer column in it is tried with the step (direction and size) that
    removes the row's violation (clipped to its bounds, at least 1): moves that make no other row worse
    are preferred, least objective loss first ("undo the least valuable choice"); otherwise the move
    that makes other rows least worse. ``tabu`` (n,) int8 remembers each column's last direction in this
    step; a column never reverses it, which bounds the work and rules out cycles.

    Returns:
        (moves, rows_left): moves made and rows still violated.
    """
    rptr, rcol, rval = M[3], M[4], M[5]
    rl, ru, rtol = M[6], M[7], M[8]
    is_int, lo, up, cost = M[10], M[11], M[12], M[13]
    dl, du, fmin, nmin, fmax, nmax = S
    m = rl.shape[0]
    queue = np.empty(m, dtype=np.int64)
    inq = np.zeros(m, dtype=np.bool_)
    head = 0
    tail = 0
    for i in range(m):
        if row_violation(rl[i], ru[i], fmin[i], nmin[i], fmax[i], nmax[i]) > rtol[i]:
            queue[tail % m] = i
            tail += 1
            inq[i] = True
    moves = 0
    touched = W[4]
    cnt = W[9]
    while head < tail and moves < max_moves:
        i = queue[head % m]
        head += 1
        inq[i] = False
        lowside = nmax[i] == 0 and rl[i] - fmax[i] > rtol[i]
        upside = nmin[i] == 0 and fmin[i] - ru[i] > rtol[i]
        if not (lowside or upside):
            continue
        viol = rl[i] - fmax[i] if lowside else fmin[i] - ru[i]
        need = 1.0 if lowside else -1.0
        best_j = -1
        best_v = 0.0
        best_strict = False
        best_obj = INF
        best_score = INF
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
            step = np.ceil(viol / abs(a) - 1e-9)
            if step < 1:
                step = 1.0
            if step > room:
                step = room
            v = cur + s * step
            _stage_move(j, v, M, S, W)
            nworse, score = _evaluate(M, S, W, i)
            # improvement of the focus row
            sf = W[0][i]
            sn = W[1][i]
            sx = W[2][i]
            snx = W[3][i]
            newv = row_violation(rl[i], ru[i], fmin[i] + sf, nmin[i] + sn, fmax[i] + sx, nmax[i] + snx)
            _discard(W)
            if newv >= viol - 1e-12:
                continue
            strict = nworse == 0
            obj = cost[j] * (v - cur)
            better = False
            if best_j < 0:
                better = True
            elif strict and not best_strict:
                better = True
            elif strict == best_strict:
                if strict:
                    better = obj < best_obj - 1e-12 or (abs(obj - best_obj) <= 1e-12 and score < best_score)
                else:
                    better = score < best_score - 1e-12 or (abs(score - best_score) <= 1e-12 and obj < best_obj)
            if better:
                best_j = j
                best_v = v
                best_strict = strict
                best_obj = obj
                best_score = score
        if best_j < 0:
            continue
        tabu[best_j] = 1 if best_v > dl[best_j] else -1
        _stage_move(best_j, best_v, M, S, W)
        # collect touched rows before committing (commit clears the list)
        nt = cnt[0]
        tl = touched[:nt].copy()
        _commit(S, W)
        moves += 1
        for t in range(nt):
            r = tl[t]
            if not inq[r] and row_violation(rl[r], ru[r], fmin[r], nmin[r], fmax[r], nmax[r]) > rtol[r]:
                queue[tail % m] = r
                tail += 1
                inq[r] = True
    left = 0
    for i in range(m):
        if row_violation(rl[i], ru[i], fmin[i], nmin[i], fmax[i], nmax[i]) > rtol[i]:
            left += 1
    return moves, left


@njit(cache=True)
def _quick_reject(j, cur, new, M, S):
    """True when moving column j (fixed at ``cur``, no VUB children) to ``new`` makes some row's violation
    grow beyond its tolerance: the test of ``_try`` + ``_evaluate`` with the same arithmetic, without staging
    (most fill candidates fail it, e.g. every other configuration of an allocated job)."""
    cptr, cind, cval = M[0], M[1], M[2]
    rl, ru, rtol = M[6], M[7], M[8]
    fmin, nmin, fmax, nmax = S[2], S[3], S[4], S[5]
    for k in range(cptr[j], cptr[j + 1]):
        i = cind[k]
        a = cval[k]
        d = a * new - a * cur
        old = row_violation(rl[i], ru[i], fmin[i], nmin[i], fmax[i], nmax[i])
        nv = row_violation(rl[i], ru[i], fmin[i] + d, nmin[i], fmax[i] + d, nmax[i])
        if nv - old > rtol[i]:
            return True
    return False


@njit(cache=True)
def fill_pass(order, M, S, W):
    """Greedy improvement: each integer column of ``order`` moves in its improving direction
    (-sign(cost), minimisation form) as far as no row's violation grows: steps of 1, doubled after
    each success and reset to 1 after a failure.

    Returns:
        (columns changed, total objective change (<= 0, minimisation form)).
    """
    lo, up, cost = M[11], M[12], M[13]
    pptr = M[14]
    dl = S[0]
    changed = 0
    gain = 0.0
    for t in range(order.shape[0]):
        j = order[t]
        c = cost[j]
        if c == 0:
            continue
        s = -1.0 if c > 0 else 1.0
        step = 1.0
        moved = False
        leaf = pptr[j + 1] == pptr[j] and S[0][j] == S[1][j]
        for _ in range(256):  # bounded: an unbounded improving direction stops after ~2^128 steps
            cur = dl[j]
            room = up[j] - cur if s > 0 else cur - lo[j]
            if room < 1:
                break
            k = step if step <= room else np.floor(room)
            if leaf and _quick_reject(j, cur, cur + s * k, M, S):
                nw = 1  # the staged evaluation would find the same growing row
            else:
                nw, sc = _try(j, cur + s * k, M, S, W, -1)
            if nw == 0:
                _stage_move(j, cur + s * k, M, S, W)
                _commit(S, W)
                gain += c * s * k
                moved = True
                step = step * 2.0
            elif k > 1:
                step = 1.0
            else:
                break
        if moved:
            changed += 1
    return changed, gain


@njit(cache=True)
def init_activity(M, S):
    """Recompute fmin/nmin/fmax/nmax of every row from the domains (one pass over the CSC arrays)."""
    cptr, cind, cval = M[0], M[1], M[2]
    dl, du, fmin, nmin, fmax, nmax = S
    fmin[:] = 0.0
    fmax[:] = 0.0
    nmin[:] = 0
    nmax[:] = 0
    n = dl.shape[0]
    for j in range(n):
        for k in range(cptr[j], cptr[j + 1]):
            i = cind[k]
            a0, a1, a2, a3 = _contrib(cval[k], dl[j], du[j])
            fmin[i] += a0
            nmin[i] += a1
            fmax[i] += a2
            nmax[i] += a3


@njit(cache=True)
def swap_pass(cptr_rows, ccols, M, S, W):
    """One pass of 1-swaps in choice rows: the member currently at 1 (or none) is replaced by the member
    with the best objective improvement whose swap makes no row's violation grow (a job moves to a better
    configuration once capacity allows); rows with more than one member at 1 are skipped. ``cptr_rows`` (k+1,) / ``ccols`` (members,) list the choice
    rows' columns. Columns with VUB children are left alone.

    Returns:
        (swaps made, total objective change (<= 0, minimisation form)).
    """
    cost = M[13]
    pptr = M[14]
    dl = S[0]
    du = S[1]
    swaps = 0
    gain = 0.0
    for c in range(cptr_rows.shape[0] - 1):
        a, b = cptr_rows[c], cptr_rows[c + 1]
        j = -1
        ones = 0
        ok = True
        for t in range(a, b):
            q = ccols[t]
            if dl[q] != du[q] or pptr[q + 1] > pptr[q]:
                ok = False
                break
            if dl[q] == 1.0:
                ones += 1
                if j < 0:
                    j = q
        if not ok or ones > 1:
            continue
        base = cost[j] if j >= 0 else 0.0
        best_k = -1
        best_g = -1e-12
        for t in range(a, b):
            k = ccols[t]
            if k == j or dl[k] != 0.0:
                continue
            g = cost[k] - base
            if g >= best_g:
                continue
            if j >= 0:
                _stage_move(j, 0.0, M, S, W)
            _stage_move(k, 1.0, M, S, W)
            nw, sc = _evaluate(M, S, W, -1)
            _discard(W)
            if nw == 0:
                best_k = k
                best_g = g
        if best_k >= 0:
            if j >= 0:
                _stage_move(j, 0.0, M, S, W)
            _stage_move(best_k, 1.0, M, S, W)
            _commit(S, W)
            swaps += 1
            gain += best_g
    return swaps, gain
