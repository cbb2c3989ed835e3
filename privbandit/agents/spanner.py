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

Two shortcuts give the same sets. A square candidate set (d candidates in R^d, d <= 16), or a thin one
(n < d candidates, n <= 12), whose smallest singular value a Cholesky factorization certifies above 1e-4
times its largest entry is its own spanner: step 1 provably holds every candidate (:func:`_holds_all`). One context (the step loop's) runs step 1
in plain Python floats (:func:`barycentric_spanner_one`).

References
----------
Source paper, `def:spanner`, `lem:bary-spanner`, `appdx:spanner`, `alg:plan`;
Awerbuch & Kleinberg (2008), "Online linear optimization and adaptive routing", Prop. 2.2-2.4.
"""

from __future__ import annotations

import numpy as np

from .._validation import check_array, check_real

_RANK_TOL = 1e-9
_WELL_POSED = 1e-4      # sigma_min of a square candidate set, relative to its largest |entry|, above which
_WELL_POSED_MAX = 16    # (up to 16 candidates) step 1 provably holds every candidate (:func:`_holds_all`)
_WELL_POSED_THIN = 12   # the same for n < d candidates, n <= 12 and sqrt(d) 2^n <= _THIN_REACH (:func:`_holds_all`)
_THIN_REACH = 5e4
_CHUNK = 1024                                       # contexts per pass (cache-sized work arrays)


def _pivot(coef: np.ndarray, pos: np.ndarray, arm: np.ndarray, do: np.ndarray) -> None:
    """Gauss-Jordan pivot, in place: in the rows where ``do``, replace basis column ``pos`` by ``arm``.

    ``coef`` (m, d, K) holds X^{-1} Phi^T; afterwards it holds X'^{-1} Phi^T for the new basis. Rows
    with ``do`` False get the identity pivot (incoming coordinates e_pos), which leaves them unchanged.
    """
    r = np.arange(coef.shape[0])
    c = coef[r, :, arm]                                    # (m, d): coordinates of the incoming arm
    c[~do] = 0.0
    c[~do, pos[~do]] = 1.0
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
    if max_swaps is None:
        max_swaps = _max_swaps(d, constant)
    if m == 0:
        return np.zeros((0, k), dtype=bool)
    # a single candidate is its own spanner (step 1 picks it, or it is the zero vector and kept as the
    # fallback): only contexts with two or more candidates need the computation
    single = np.count_nonzero(mask, axis=1) == 1
    if np.any(single):
        out = mask.copy()
        rest = np.nonzero(~single)[0]
        if rest.size:
            out[rest] = barycentric_spanner(phi[rest], mask[rest], constant=constant, max_swaps=max_swaps)
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
    """Whether a set of ``n`` candidates in R^d may be certified to be its own spanner (:func:`_holds_all`)."""
    if n == d:
        return 2 <= n <= _WELL_POSED_MAX
    return 2 <= n < d and n <= _WELL_POSED_THIN and np.sqrt(d) * 2.0 ** n <= _THIN_REACH


def _certified_sets(phi: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Which contexts' candidate sets (``mask`` (m, K) of features ``phi`` (m, K, d)) :func:`_certified`
    certifies, grouped by the number n of candidates (only n with :func:`_certifiable`)."""
    m, k, d = phi.shape
    counts = np.count_nonzero(mask, axis=1)
    done = np.zeros(m, dtype=bool)
    for n in np.unique(counts).tolist():
        if not _certifiable(n, d):
            continue
        idx = np.flatnonzero(counts == n)
        if n == k:                                  # every arm a candidate
            sub = phi[idx]
        else:                                       # each row of mask[idx] has n Trues, in arm order
            arms = np.nonzero(mask[idx])[1].reshape(idx.size, n)
            sub = phi[idx[:, None], arms]
        done[idx] = _certified(sub)
    return done


def _certified(subs: np.ndarray) -> np.ndarray:
    """Which candidate matrices of the stack ``subs`` (m, n, d) (n, d with :func:`_certifiable`) have sigma_min
    certified above ``_WELL_POSED`` times their largest |entry|: one Cholesky factorization (LAPACK potrf) of
    each sub sub^T - (_WELL_POSED scale)^2 I. Such a set is its own spanner (proof in :func:`_holds_all`)."""
    scale = np.abs(subs).max(axis=(1, 2))
    gram = subs @ np.swapaxes(subs, 1, 2)
    diag = np.arange(subs.shape[1])
    gram[:, diag, diag] -= ((_WELL_POSED * scale) ** 2)[:, None]
    return (scale > 0) & _factorizes(gram)


def _factorizes(gram: np.ndarray) -> np.ndarray:
    """Whether each symmetric matrix of ``gram`` (m, n, n) has a Cholesky factorization (potrf succeeds).

    numpy's Cholesky gufunc marks a failed factorization with NaNs (``np.linalg.cholesky`` turns that
    into one error for the whole stack); without that gufunc, one failure leaves the whole stack
    uncertified (the spanner is then computed in full: slower, same result).
    """
    if _CHOLESKY is None:
        try:
            np.linalg.cholesky(gram)
        except np.linalg.LinAlgError:
            return np.zeros(gram.shape[0], dtype=bool)
        return np.ones(gram.shape[0], dtype=bool)
    with np.errstate(invalid="ignore"):
        factor = _CHOLESKY(gram, signature="d->d")
    return ~np.isnan(np.diagonal(factor, axis1=1, axis2=2)).any(axis=1)


try:
    from numpy.linalg._umath_linalg import cholesky_lo as _CHOLESKY
except ImportError:                              # pragma: no cover - another numpy layout
    _CHOLESKY = None


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
            _pivot(part, pos_b, arm, np.ones(active.size, dtype=bool))
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


def barycentric_spanner_one(features: np.ndarray, mask: np.ndarray | None = None, *, constant: float = 2.0,
                            max_swaps: int | None = None) -> np.ndarray:
    """:func:`barycentric_spanner` of one context: ``barycentric_spanner(features[None], mask[None])[0]``.

    The per-round path of the agents: step 1 runs in plain Python floats on the candidates' columns only
    (the same products and differences, in the same order, as the batched elimination, so the same
    arms), and stops once every candidate is held; step 2's swaps, rarely needed, run through the batched
    code.

    Parameters
    ----------
    features : ndarray (K, d)
        phi(x, a) of one context.
    mask : ndarray of bool (K,), optional
        The candidate set (all actions by default), at least one True entry.
    constant, max_swaps
        As in :func:`barycentric_spanner`.

    Returns
    -------
    ndarray of bool (K,)
        The spanner, equal to the batched function's row.

    References
    ----------
    Source paper, `def:spanner`, `lem:bary-spanner`; Awerbuch & Kleinberg (2008).
    """
    phi = check_array("features", features, ndim=2)
    k, d = phi.shape
    constant = check_real("constant", constant, low=1.0, low_open=True)
    if mask is None:
        mask = np.ones(k, dtype=bool)
    else:
        mask = np.asarray(mask)
        if mask.shape != (k,) or mask.dtype != bool:
            raise ValueError(f"mask must be a boolean array of shape ({k},), got {mask.dtype} {mask.shape}")
        if not mask.any():
            raise ValueError("mask must keep at least one action")
    return _spanner_one(phi, mask, constant, _max_swaps(d, constant) if max_swaps is None else max_swaps)


def _max_swaps(d: int, constant: float) -> int:
    """The default cap on step 2's swaps per context (far above d log_C d)."""
    return 4 * d * (1 + int(np.ceil(np.log(max(d, 2)) / np.log(constant)))) + 8


def _spanner_one(phi: np.ndarray, mask: np.ndarray, constant: float, max_swaps: int) -> np.ndarray:
    """:func:`barycentric_spanner_one` for checked input: finite features (K, d), a non-empty bool mask (K,).

    Step 1 follows :func:`_spanner_chunk` on the candidates' columns: a held arm's column is exactly zero
    below its position (its pivot ratio is 1.0, so each entry loses exactly itself) and stays zero, so it
    is dropped from the later updates and can never be the largest candidate; once every candidate is
    held, the remaining positions find only zeros and keep their unit vectors.
    """
    keep = mask.tolist()
    n = keep.count(True)                        # np.flatnonzero(mask) as ints (a range when all are candidates)
    arms = range(n) if n == len(keep) else [a for a, k in enumerate(keep) if k]
    if n == 1:                                  # a single candidate is its own spanner
        return mask.copy()
    sub = phi if n == mask.shape[0] else phi[arms]
    scale = float(np.maximum.reduce(np.abs(sub), axis=None))      # max |entry| (exact in any order)
    if _certifiable(n, phi.shape[1]) and scale > 0 and _holds_all(sub, scale):
        return mask.copy()
    tol = _RANK_TOL * (scale if scale > 0 else 1.0)
    rows = sub.T.tolist()                       # rows[i][c]: coefficient i of the c-th live candidate
    live = list(range(n))                       # candidates not yet held, in arm order
    held: list[int] = []
    d = len(rows)
    for i in range(d):
        row = rows[i]
        mags = [abs(v) for v in row]
        top = max(mags)
        if not top > tol:                       # every candidate gives 0: keep e_i
            continue
        j = mags.index(top)                     # the first largest, as argmax
        held.append(live.pop(j))
        if not live:
            break
        p = row[j]
        ratio = [v / p for v in row]
        del ratio[j]
        for r in range(i + 1, d):
            below = rows[r]
            b = below.pop(j)
            rows[r] = [v - b * q for v, q in zip(below, ratio)]
    if live and len(held) > 1:                  # a candidate outside the basis: step 2 may swap
        return _spanner_chunk(phi[None], mask[None], constant, max_swaps)[0]
    out = np.zeros(mask.shape[0], dtype=bool)
    if held:
        out[[arms[c] for c in held]] = True
    else:                                       # every candidate is the zero vector
        out[arms[0]] = True
    return out


def _holds_all(sub: np.ndarray, scale: float | None = None) -> bool:
    """Whether sigma_min of the candidate matrix ``sub`` (n, d) (n, d with :func:`_certifiable`: square up to
    16, or n < d thin) is certified above ``_WELL_POSED * scale``, scale = max |entry| (:func:`_certified`);
    then step 1 of :func:`_spanner_chunk` holds every candidate, so the set is its own spanner (the
    algorithm's result, without running it).

    Proof. Step 1 is Gaussian elimination of ``sub`` with partial pivoting (|multipliers| <= 1, so entries
    grow by at most 2^(n-1)). While positions 0..i-1 each held an arm, the computed (n-i) x (n-i) remainder
    is the exact Schur complement of sub + E with ||E||_2 <= n^3 2^n u scale <= 3e-8 scale (n <= 16,
    u = 2^-53; Higham, Accuracy and Stability, Thm 9.3), whose smallest singular value is at least
    sigma_min(sub) - ||E||_2 (its inverse is a block of (sub + E)^-1). Its first column, position i, then
    has an entry of size >= (1e-4 - 3e-8) scale / 4 > _RANK_TOL * scale, so position i holds an arm too.
    A successful Cholesky factorization certifies lambda_min(sub sub^T) >= (1e-4 scale)^2 - 1e-11 scale^2
    (rounding of the product and the factorization, Higham Thm 10.3), i.e. sigma_min >= 0.99e-4 scale.

    Thin sets (n < d, n <= 12, sqrt(d) 2^n <= 5e4). Step 1's row operations only change the positions
    after the current one, with |multipliers| <= 1, and the computed ones are exact for sub + E with
    ||E||_2 <= sqrt(n d) 3 n 2^n u scale <= 1e-8 scale. Suppose a candidate c is never held. Follow its
    row reduced by the pivot rows (all positions, in exact arithmetic on sub + E): at a position where an
    arm was held it becomes 0 and stays 0 (later pivot rows are 0 there too); at a skipped position every
    unheld row was at most tol = 1e-9 scale there, and each later pivot at most doubles the largest unheld
    entry there, so it ends at most 2^n tol. The reduced row is a combination of the rows of sub + E with
    coefficient 1 on c, so its norm, at most sqrt(d) 2^n tol <= 5e-5 scale, is at least sigma_min(sub + E)
    >= 0.99e-4 scale - 1e-8 scale: a contradiction. So every candidate is held.
    ``scale``, when given, must be that max |entry| (the caller's, computed once).
    """
    global _potrf
    if _potrf is None:                          # scipy on first use: `import privbandit` needs none
        from scipy.linalg.lapack import dpotrf as _potrf
    if scale is None:
        scale = float(np.abs(sub).max())
    gram = sub @ sub.T                          # one context: LAPACK's potrf directly (the batched
    gram.ravel()[::sub.shape[0] + 1] -= (_WELL_POSED * scale) ** 2    # gufunc costs ~5x more per call)
    # gram.T is gram in Fortran order (numpy computes A A^T as one triangle and mirrors it, and any
    # successful factorization of the shifted product certifies), factored in place without a copy;
    # positional arguments (lower=1, clean=0, overwrite_a=1) skip f2py's keyword parsing (~1 us a call)
    return scale > 0 and _potrf(gram.T, 1, 0, 1)[1] == 0


_potrf = None


def spanner_coefficients(features: np.ndarray, spanner: np.ndarray, candidates: np.ndarray) -> tuple[np.ndarray, float]:
    """Least-squares coefficients of each candidate on one context's spanner (for checks and tests).

    Parameters
    ----------
    features : ndarray (K, d)
        One context's features.
    spanner : ndarray of bool (K,)
        The spanner.
    candidates : ndarray of bool (K,)
        The set the spanner should span.

    Returns
    -------
    coefficients : ndarray (n_candidates, n_spanner)
    residual : float
        max over candidates of ||phi_a - sum gamma phi_{a'}||.
    """
    phi = check_array("features", features, ndim=2)
    basis = phi[np.asarray(spanner, dtype=bool)]
    target = phi[np.asarray(candidates, dtype=bool)]
    coefs, *_ = np.linalg.lstsq(basis.T, target.T, rcond=None)
    resid = np.linalg.norm(basis.T @ coefs - target.T, axis=0)
    return coefs.T, float(resid.max(initial=0.0))
