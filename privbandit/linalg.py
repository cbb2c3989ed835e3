"""Linear algebra of symmetric and PSD matrices, shared by the oracles, the agents and the information matrices.

None of these functions spends privacy: applied to released statistics they are post-processing.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["EIG_FLOOR", "inverse_rank_update", "polar_psd_factor", "psd_inv_sqrt", "psd_power", "psd_project",
           "psd_sqrt", "solve_regularized", "symmetric_part", "symmetric_solution"]

EIG_FLOOR = 1e-12
"""Relative eigenvalue floor used before inverse square roots of possibly noisy matrices."""


def symmetric_part(a: np.ndarray) -> np.ndarray:
    """The symmetric part (A + A^T) / 2 of a square matrix (or of each of a stack of them).

    Parameters
    ----------
    a : ndarray
        A square matrix.
    """
    return 0.5 * (a + np.swapaxes(a, -1, -2))


def psd_power(a: np.ndarray, power: float, floor: float = EIG_FLOOR) -> np.ndarray:
    """A^power for a symmetric matrix, with eigenvalues floored at ``floor * max(1, lambda_max)``.

    Noisy (privatized) matrices can lose positive definiteness; flooring keeps inverse square roots
    finite instead of crashing or returning NaN.

    Parameters
    ----------
    a : ndarray
        A symmetric matrix.
    power : float
        The power (-1/2 for an inverse square root).
    floor : float
        The relative floor of the eigenvalues.
    """
    vals, vecs = np.linalg.eigh(symmetric_part(a))
    top = max(1.0, float(np.max(np.abs(vals)))) if vals.size else 1.0
    vals = np.maximum(vals, floor * top)
    return (vecs * vals ** power) @ vecs.T


def psd_sqrt(a: np.ndarray) -> np.ndarray:
    """Symmetric square root of a PSD matrix (negative eigenvalues floored at 0).

    Parameters
    ----------
    a : ndarray
        A symmetric matrix.
    """
    vals, vecs = np.linalg.eigh(symmetric_part(a))
    return (vecs * np.sqrt(np.maximum(vals, 0.0))) @ vecs.T


def psd_project(a: np.ndarray) -> np.ndarray:
    """The nearest PSD matrix in Frobenius norm: the symmetric part with its negative eigenvalues set to 0.

    A privatised average of PSD matrices may be indefinite; projecting it is post-processing, and its
    operator-norm distance to any PSD target is at most twice that of the input.

    Parameters
    ----------
    a : ndarray
        A square matrix.
    """
    vals, vecs = np.linalg.eigh(symmetric_part(a))
    return (vecs * np.maximum(vals, 0.0)) @ vecs.T


def symmetric_solution(w: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The symmetric A closest to solving W A = M: argmin over A = A^T of ||W A - M||_F, for symmetric positive
    definite W.

    The minimiser solves the Lyapunov equation W^2 A + A W^2 = W M + M^T W; in W's eigenbasis
    (W = V diag(w) V^T, C = V^T (W M + M^T W) V) it is A = V [C_ij / (w_i^2 + w_j^2)] V^T. If M = W A0 with A0
    symmetric, it returns A0.

    Why not (W^{-1} M + M^T W^{-1}) / 2. A released M = W A0 + N with i.i.d. noise N (the information-weighted
    Psi~ of IW-Regression-DP or -LDP) has W^{-1} M = A0 + W^{-1} N, whose noise is small along the directions W
    weighs up. Its transpose's noise N^T W^{-1} is not: averaging the two moves noise from the directions W
    weighs down (well observed, large W^{-1}) into those it weighs up. Here the noise of entry (i, j) in W's
    eigenbasis has variance s^2 / (w_i^2 + w_j^2), at most that of W^{-1} N's entry (i, j), s^2 / w_i^2.

    Parameters
    ----------
    w : ndarray (d, d)
        Symmetric positive definite.
    m : ndarray (d, d)

    Returns
    -------
    ndarray (d, d), symmetric

    References
    ----------
    Source paper, `alg:JDP-linear-regression` and `alg:LDP-linear-regression` (the released Psi~ = W Psi + noise).
    """
    vals, vecs = np.linalg.eigh(symmetric_part(w))
    c = vecs.T @ (w @ m + m.T @ w) @ vecs
    sq = vals * vals
    return symmetric_part(vecs @ (c / (sq[:, None] + sq[None, :])) @ vecs.T)


def psd_inv_sqrt(a: np.ndarray) -> np.ndarray:
    """A^{-1/2} with eigenvalues floored at :data:`EIG_FLOOR` (relative): never NaN, never a crash on a noisy
    indefinite matrix.

    Parameters
    ----------
    a : ndarray
        A symmetric matrix.
    """
    return psd_power(a, -0.5)


def polar_psd_factor(a: np.ndarray) -> np.ndarray:
    """(A^T A)^{1/2}, the PSD factor P of the polar decomposition A = Q P (the paper writes it sym(A)).

    Not the symmetric part of A (:func:`symmetric_part`): the two agree only on PSD matrices.

    Parameters
    ----------
    a : ndarray
        A square matrix.
    """
    _, s, vt = np.linalg.svd(a)
    return (vt.T * s) @ vt


def solve_regularized(mat: np.ndarray, vec: np.ndarray, lam: float) -> np.ndarray:
    """(mat + lam I)^{-1} vec: the ridge solve, by least squares if the (noisy) system is singular (never NaN).

    Parameters
    ----------
    mat : ndarray (d, d)
        A square matrix (a Gram matrix, or a privatized one that may be indefinite).
    vec : ndarray (d,)
    lam : float
        The ridge added to the diagonal.
    """
    a = mat + lam * np.eye(mat.shape[0])
    try:
        out = np.linalg.solve(a, vec)
    except np.linalg.LinAlgError:
        out = np.linalg.lstsq(a, vec, rcond=None)[0]
    if not np.all(np.isfinite(out)):
        out = np.linalg.lstsq(a, vec, rcond=None)[0]
    return out


def inverse_rank_update(v_inv: np.ndarray, x: np.ndarray) -> float:
    """Replace V^{-1} by (V + X^T X)^{-1} in place, in O(m d^2 + m^3); returns log det(V + X^T X) - log det V.

    Woodbury: (V + X^T X)^{-1} = V^{-1} - V^{-1} X^T C^{-1} X V^{-1} with the capacitance
    C = I + X V^{-1} X^T, and log det(V + X^T X) = log det V + log det C (the matrix determinant
    lemma). For one row C is the scalar 1 + x^T V^{-1} x (Sherman-Morrison).

    Parameters
    ----------
    v_inv : ndarray (d, d)
        V^{-1} of a symmetric positive definite V, overwritten.
    x : ndarray (m, d)
        The rows added to V.
    """
    if x.shape[0] == 1:
        vx = v_inv.dot(x[0])
        q = float(x[0].dot(vx))
        v_inv -= vx[:, None] * (vx / (1.0 + q))
        return math.log1p(q)
    vx = v_inv @ x.T                                      # V^{-1} X^T (d, m)
    cap = np.eye(x.shape[0]) + x @ vx
    v_inv -= vx @ np.linalg.solve(cap, x @ v_inv)
    return float(np.linalg.slogdet(cap)[1])
