"""Approximate barycentric spanners of action sets, vectorised over many contexts at once.

A subset A' of a set of feature vectors {phi_a : a in A_1} is a C-spanner when every phi_a is a
combination sum_{a' in A'} gamma_{a'} phi_{a'} with every |gamma_{a'}| <= C (`def:spanner`). A
1-spanner of size dim(span) exists (`lem:bary-spanner`); Awerbuch & Kleinberg (2008) compute a
C-spanner (C > 1) in polynomial time:

1. Start from the basis X = I (columns e_1..e_d). For each position i, put in column i the vector
   phi_a maximizing |det X_{i <- a}| (keep e_i when every candidate gives 0: the set spans fewer
   than d dimensions);
2. while some phi_a and a position i holding an action give |det X_{i <- a}| > C |det X|, swap.

Every swap multiplies |det X| by more than C, so step 2 ends after O(d log_C d) swaps. By Cramer's
rule the coefficients of phi_a in the basis X are c_i = det X_{i <- a} / det X, so the algorithm
runs on the coefficient tensor Cf = X^{-1} Phi^T: step 1 is Gaussian elimination with the largest
pivot over the candidate arms (LU order: only the rows still to be filled are updated), and step 2,
needed only where some candidate is outside the basis, solves for the full Cf once and then does one
Gauss-Jordan pivot per swap (no determinant is ever formed). The retained unit vectors e_i only pin down coordinates
outside the set's span, so at the end every surviving phi_a has coefficients in [-C, C] on the
chosen actions and zero on the retained e_i: a C-spanner of size dim(span).

A shortcut gives the same sets. A square candidate set (d candidates in R^d, d <= 16), or a thin one
(n < d candidates, n <= 12), whose smallest singular value a Cholesky factorization certifies above 1e-4
times its largest entry is its own spanner: step 1 holds every candidate (:func:`_certified`).

References
----------
Source paper, `def:spanner`, `lem:bary-spanner`, `appdx:spanner`, `alg:plan`;
Awerbuch & Kleinberg (2008), "Online linear optimization and adaptive routing", Prop. 2.2-2.4.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .._validation import check_array, check_real

_RANK_TOL = 1e-9
_WELL_POSED = 1e-4      # sigma_min of a square candidate set, relative to its largest |entry|, above which
_WELL_POSED_MAX = 16    # (up to 16 candidates) step 1 holds every candidate (:func:`_certified`)
_WELL_POSED_THIN = 12   # the same for n < d candidates, n <= 12 and sqrt(d) 2^n <= _THIN_REACH (:func:`_certified`)
_THIN_REACH = 5e4
_CHUNK = 1024                                       # contexts per pass (cache-sized work arrays)


def _pivot(coef: np.ndarray, pos: np.ndarray, arm: np.ndarray) -> None:
    """Gauss-Jordan pivot, in place: in every row replace basis column ``pos`` by ``arm``; ``coef`` (m, d, K)
    holds X^{-1} Phi^T, and afterwards X'^{-1} Phi^T for the new basis."""
    r = np.arange(coef.shape[0])
    c = coef[r, :, arm]                                    # (m, d): coordinates of the incoming arm
    piv_row = coef[r, pos, :] / c[r, pos][:, None]         # (m, K)
    coef -= c[:, :, None] * piv_row[:, None, :]
    coef[r, pos, :] = piv_row


def barycentric_spanner(features: np.ndarray, mask: np.ndarray | None = None, *, constant: float = 2.0,
                        max_swaps: int | None = None) -> np.ndarray:
    """A C-approximate barycentric spanner of the masked actions of every context.

    Parameters
    ----------
    features : ndarray (m, K, d)
        phi(x, a) for m contexts and K actions.
    mask : ndarray of bool (m, K), optional
        The candidate set A_1 of each context (all actions by default). Every row needs at least one
        True entry.
    constant : float
        C > 1: every candidate is a combination of the spanner's vectors with coefficients in [-C, C]
        (C = 2 in the source paper).
    max_swaps : int, optional
        Safety cap on step 2's swaps per context (default: a bound far above d log_C d; never binds
        in exact arithmetic).

    Returns
    -------
    ndarray of bool (m, K)
        The spanner of each context: a subset of ``mask`` with at most min(d, K) actions (exactly
        dim span{phi_a : a in A_1} of them, or one action when all candidates are 0). Ties are broken
        towards the lowest action index, so the result is deterministic.

    References
    ----------
    Source paper, `def:spanner`, `lem:bary-spanner`; Awerbuch & Kleinberg (2008).
    """
    phi = check_array("features", features, ndim=3)
    m, k, d = phi.shape
    constant = check_real("constant", constant, low=1.0, low_open=True)
    if mask is None:
        mask = np.ones((m, k), dtype=bool)
    else:
        mask = np.asarray(mask)
        if mask.shape != (m, k) or mask.dtype != bool:
            raise ValueError(f"mask must be a boolean array of shape ({m}, {k}), got {mask.dtype} {mask.shape}")
        if m and not np.all(mask.any(axis=1)):
            raise ValueError("mask must keep at least one action in every context")
    return masked_spanner(phi, mask, constant, max_swaps)


def masked_spanner(phi: np.ndarray, mask: np.ndarray, constant: float, max_swaps: int | None = None) -> np.ndarray:
    """:func:`barycentric_spanner` for checked input: finite float features (m, K, d), a boolean mask (m, K)
    with a candidate in every row, C > 1 (the agents' planner calls it on contexts it has checked)."""
    m, k, d = phi.shape
    if max_swaps is None:
        max_swaps = _max_swaps(d, constant)
    if m == 0:
        return np.zeros((0, k), dtype=bool)
    # a single candidate is its own spanner (step 1 picks it, or it is the zero vector and kept as the
    # fallback): only contexts with two or more candidates need the computation
    single = mask.sum(axis=1) == 1
    if np.any(single):
        out = mask.copy()
        rest = np.nonzero(~single)[0]
        if rest.size:
            out[rest] = masked_spanner(phi[rest], mask[rest], constant, max_swaps)
        return out
    out = np.zeros((m, k), dtype=bool)
    for lo in range(0, m, _CHUNK):
        hi = min(m, lo + _CHUNK)
        part, keep = phi[lo:hi], mask[lo:hi]
        done = _certified_sets(part, keep)      # sets certified to be their own spanner
        out[lo:hi][done] = keep[done]
        rest = np.flatnonzero(~done)
        if rest.size:
            out[lo + rest] = _spanner_chunk(part[rest], keep[rest], constant, max_swaps)
    return out


def _certifiable(n: int, d: int) -> bool:
    """Whether a set of ``n`` candidates in R^d may be certified to be its own spanner (:func:`_certified`)."""
    if n == d:
        return 2 <= n <= _WELL_POSED_MAX
    return 2 <= n < d and n <= _WELL_POSED_THIN and math.sqrt(d) * 2.0 ** n <= _THIN_REACH


def _certified_sets(phi: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Which contexts' candidate sets (``mask`` (m, K) of features ``phi`` (m, K, d)) :func:`_certified`
    certifies, grouped by the number n of candidates (only n with :func:`_certifiable`)."""
    m, k, d = phi.shape
    counts = mask.sum(axis=1)
    low, high = int(counts.min()), int(counts.max())
    if low == high:                                 # one group (always so for one context)
        groups = [(low, np.s_[:], m)] if _certifiable(low, d) else []
    else:
        groups = [(n, idx, idx.size) for n in np.unique(counts).tolist() if _certifiable(n, d)
                  for idx in [np.flatnonzero(counts == n)]]
    done = np.zeros(m, dtype=bool)
    for n, idx, size in groups:
        if n == k:                                  # every arm a candidate
            sub = phi[idx]
        else:                                       # each row of mask[idx] has n Trues, in arm order
            arms = np.nonzero(mask[idx])[1].reshape(size, n)
            sub = phi[np.arange(m)[idx][:, None], arms]
        done[idx] = _certified(sub)
    return done


def _certified(subs: np.ndarray) -> np.ndarray:
    """Which candidate matrices of the stack ``subs`` (m, n, d) (n, d with :func:`_certifiable`) have sigma_min
    certified above ``_WELL_POSED`` times their largest |entry|: a Cholesky factorization of each
    sub sub^T - (_WELL_POSED scale)^2 I succeeds.

    Such a set is its own spanner: step 1 holds an arm at every position, since the rounding of the
    elimination and of the factorization (Higham, Accuracy and Stability of Numerical Algorithms,
    Thms 9.3 and 10.3) stays far below that margin at the sizes allowed."""
    scale = np.abs(subs).max(axis=(1, 2))
    gram = subs @ np.swapaxes(subs, 1, 2)
    diag = np.arange(subs.shape[1])
    gram[:, diag, diag] -= ((_WELL_POSED * scale) ** 2)[:, None]
    return (scale > 0) & _factorizes(gram)


def _factorizes(gram: np.ndarray) -> np.ndarray:
    """Whether each symmetric matrix of ``gram`` (m, n, n) has a Cholesky factorization with positive pivots
    (False for NaN): ``np.linalg.cholesky`` for one matrix, else the factorization column by column,
    vectorised over the stack (no LAPACK call per matrix)."""
    if gram.shape[0] == 1:
        try:
            factor = np.linalg.cholesky(gram)
        except np.linalg.LinAlgError:
            return np.zeros(1, dtype=bool)
        return np.isfinite(factor).all(axis=(1, 2))       # (NaN input does not raise)
    a = np.moveaxis(gram, 0, -1).copy()                   # (n, n, m)
    ok = np.ones(a.shape[-1], dtype=bool)
    with np.errstate(all="ignore"):         # (a failed matrix's later columns are never read)
        for j in range(a.shape[0]):
            pivot = a[j, j]
            ok &= pivot > 0.0
            col = a[j + 1:, j] / np.sqrt(np.where(ok, pivot, 1.0))
            a[j + 1:, j + 1:] -= col[:, None] * col[None, :]
    return ok


def _spanner_chunk(phi: np.ndarray, mask: np.ndarray, constant: float, max_swaps: int) -> np.ndarray:
    m, k, d = phi.shape
    g = np.swapaxes(phi, 1, 2).copy()                      # X = I: coefficients are the features themselves
    scale = np.where(mask, np.abs(phi).max(axis=2), 0.0).max(axis=1)    # largest |entry| of a candidate
    tol = _RANK_TOL * np.where(scale > 0, scale, 1.0)
    holder = np.full((m, d), -1, dtype=np.int64)           # arm held by each basis position (-1: e_i)
    rows = np.arange(m)

    # step 1: fill the positions one by one with the arm of largest |coefficient| (largest determinant).
    # Only the rows below the current position are updated (LU order): they equal the Gauss-Jordan
    # coefficients there, which is all the choice of the next positions needs.
    for i in range(d):
        cand = np.where(mask, np.abs(g[:, i, :]), -1.0)
        best = np.argmax(cand, axis=1)
        ok = cand[rows, best] > tol
        if not np.any(ok):
            continue
        holder[ok, i] = best[ok]
        if i + 1 < d:
            piv = g[:, i, :] / np.where(ok, g[rows, i, best], 1.0)[:, None]      # (m, K)
            below = np.where(ok[:, None], g[rows, i + 1:, best], 0.0)          # (m, d - i - 1)
            g[:, i + 1:, :] -= below[:, :, None] * piv[:, None, :]

    # step 2, only where some candidate is outside the basis (and the basis has two arms or more; one
    # held arm spans a collinear set with coefficients <= 1 since it has the largest norm): the full
    # coefficients X^{-1} Phi^T, then swaps while a candidate has a coefficient above C on a held position
    held = holder >= 0
    need = np.nonzero((held.sum(axis=1) < mask.sum(axis=1)) & (held.sum(axis=1) > 1))[0]
    if need.size and max_swaps > 0:
        x = np.broadcast_to(np.eye(d), (need.size, d, d)).copy()
        r_idx, pos = np.nonzero(held[need])
        x[r_idx, :, pos] = phi[need[r_idx], holder[need[r_idx], pos], :]
        coef = np.linalg.solve(x, np.swapaxes(phi[need], 1, 2))             # (r, d, K)
        sub_holder = holder[need]
        allowed = held[need][:, :, None] & mask[need][:, None, :]
        active = np.arange(need.size)
        for _ in range(max_swaps):
            cand = np.where(allowed[active], np.abs(coef[active]), 0.0).reshape(active.size, -1)
            best = np.argmax(cand, axis=1)
            improve = cand[np.arange(active.size), best] > constant
            active, best = active[improve], best[improve]
            if active.size == 0:
                break
            pos_b, arm = np.divmod(best, k)
            part = coef[active]
            _pivot(part, pos_b, arm)
            coef[active] = part
            sub_holder[active, pos_b] = arm
        holder[need] = sub_holder

    out = np.zeros((m, k), dtype=bool)
    r, c = np.nonzero(holder >= 0)
    out[r, holder[r, c]] = True
    empty = ~out.any(axis=1)                                  # every candidate is the zero vector
    if np.any(empty):
        out[empty, np.argmax(mask[empty], axis=1)] = True
    return out


@lru_cache(maxsize=64)
def _max_swaps(d: int, constant: float) -> int:
    """The default cap on step 2's swaps per context (far above d log_C d)."""
    return 4 * d * (1 + int(np.ceil(np.log(max(d, 2)) / np.log(constant)))) + 8

