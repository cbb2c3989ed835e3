"""Information matrices of private linear regression: F_LDP, F_DP, U*, W*, price of privacy, kappa(p).

The paper's central objects. For a feature distribution p, given to every function as ``features, weights``
(ndarray (n, d) and (n,): a sample's rows or a discrete distribution's atoms, and their probabilities,
uniform when ``weights`` is omitted):

- F_LDP(U) = E_p[U phi phi^T U / ||U phi|| 1{phi != 0}] + lambda U, and U* solves F_LDP(U) = I
  (`def:FLDP`); U*^{-1} is an "L1 covariance" (`lem:U-L1-covariance`).
- F_DP(W) = E_p[W phi phi^T W / (1 + gamma ||W phi||)] + lambda W, and W* solves F_DP(W) = I
  (`def:FJDP`); W* -> Sigma^{-1/2} as gamma, lambda -> 0.
- Both are found by the exact spectral iteration F_k = F(U_k), U_{k+1} = sym(F_k^{-1/2} U_k) from
  U_0 = I (`eqn:U-spectral-exact`, `eqn:W-spectral-exact`). From U_0 = I, F_k enters [1/2, 2] after
  O(log log(1/lambda)) steps (`lem:spec-fast-converge`: lambda_min(F_{k+1}) >= lambda_min(F_k)^{1/2});
  from there the residual ||F_k - I|| shrinks by a constant factor per step (about 1/2 for U*):
  linear convergence, O(log(1/tol)) further steps.

The general algebra of symmetric and PSD matrices they use (powers, projections, the polar factor sym(A))
is in :mod:`privbandit.linalg`.

Three statements of the paper fail numerically; this module and its tests use the correct forms
(measured by ``tests/house/test_paper_errata.py``):

- The main text states W*^2 >= (Sigma + lambda^2 I)^{-1} (after `lem:Wstar-properties`). It holds only up
  to a factor 1/2: at gamma = 0, lambda = 0.1 the smallest eigenvalue of
  (Sigma + lambda^2 I)^{1/2} W*^2 (Sigma + lambda^2 I)^{1/2} is 0.75-0.79 (exactly 3/4 in one dimension at
  Sigma = 2 lambda^2). The appendix form W*^2 >= (Sigma + lambda I)^{-1} holds.
- The appendix bound of `lem:kappa-p`, ||(Sigma + lambda I)^{1/2} U*|| <= kappa_c(p) / c, fails (ratio
  2.51 for x = +-0.01, lambda = 0.01); with lambda^2 in place of lambda, as in the main text's light-tailed
  lemma after `def:kappa-p`, it holds. Almost surely a typo for lambda^2.
- The prose after `lem:spec-fast-converge` says the iteration converges "at a quadratic rate", so that
  O(log log(1/lambda)) iterations reach any accuracy. Only the entry into [1/2, 2] takes
  O(log log(1/lambda)) steps; after it the residual falls by 0.29-0.57 per step (linear), 21-37 steps in
  all to 1e-10 on the test distributions.

References
----------
Source paper, `def:FLDP`, `def:FJDP`, `eqn:U-spectral-exact`, `eqn:W-spectral-exact`, `lem:spec-fast-converge`,
`eq:PoP`, `def:kappa-p`, `lem:kappa-p`, `lem:Wstar-properties`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import check_array, check_int, check_positive, check_real, check_weights
from .linalg import polar_psd_factor, psd_inv_sqrt, psd_power, symmetric_part


def spectral_update(u: np.ndarray, f: np.ndarray) -> np.ndarray:
    """U_{k+1} = sym(F_k^{-1/2} U_k), symmetrised (`eqn:U-spectral-exact`); F_k's eigenvalues are floored at
    :data:`~privbandit.linalg.EIG_FLOOR` (relative) before the inverse square root.

    Parameters
    ----------
    u : ndarray
        The current iterate U_k (d, d).
    f : ndarray
        F(U_k) (d, d).
    """
    return symmetric_part(polar_psd_factor(psd_inv_sqrt(f) @ u))


def _check_sample(features: Any, weights: Any) -> tuple[np.ndarray, np.ndarray]:
    """The sample's rows (n, d) and their probabilities (uniform when ``weights`` is None)."""
    x = check_array("features", features, ndim=2, allow_empty=False)
    n = x.shape[0]
    return x, np.full(n, 1.0 / n) if weights is None else check_weights("weights", weights, n)


def f_ldp(u: np.ndarray, features: np.ndarray, weights: np.ndarray | None = None, *, lam: float) -> np.ndarray:
    """F_LDP(U) = E[U phi phi^T U / ||U phi|| 1{phi != 0}] + lambda U on a weighted sample.

    Parameters
    ----------
    u : ndarray (d, d)
        Symmetric positive definite U.
    features, weights : ndarray (n, d) and ndarray (n,), optional
        The distribution p (module docstring).
    lam : float
        lambda >= 0.

    References
    ----------
    Source paper, `def:FLDP`.
    """
    x, w = _check_sample(features, weights)
    ux = x @ u
    norms = np.linalg.norm(ux, axis=1)
    scale = np.divide(w, norms, out=np.zeros_like(w), where=norms > 0)
    return symmetric_part((ux * scale[:, None]).T @ ux) + lam * u


def f_dp(w_mat: np.ndarray, features: np.ndarray, weights: np.ndarray | None = None, *, gamma: float,
         lam: float) -> np.ndarray:
    """F_DP(W) = E[W phi phi^T W / (1 + gamma ||W phi||)] + lambda W on a weighted sample.

    Parameters
    ----------
    w_mat : ndarray
        W (d, d), symmetric.
    features, weights : ndarray (n, d) and ndarray (n,), optional
        The distribution p (module docstring).
    gamma, lam : float
        gamma >= 0 and lambda >= 0 of F_DP.

    References
    ----------
    Source paper, `def:FJDP`.
    """
    x, w = _check_sample(features, weights)
    wx = x @ w_mat
    scale = w / (1.0 + gamma * np.linalg.norm(wx, axis=1))
    return symmetric_part((wx * scale[:, None]).T @ wx) + lam * w_mat


@dataclass(frozen=True)
class SpectralResult:
    """Output of an exact spectral iteration.

    Attributes
    ----------
    matrix : ndarray (d, d)
        The last iterate (U* or W* to within ``residual``).
    residual : float
        ||F(matrix) - I||_op.
    iterations : int
        Number of updates made.
    lambda_min, lambda_max : ndarray
        Extreme eigenvalues of F_k for k = 0..iterations (the convergence trace).
    """

    matrix: np.ndarray
    residual: float
    iterations: int
    lambda_min: np.ndarray
    lambda_max: np.ndarray

    @property
    def iterations_to_band(self) -> int:
        """First k with F_k inside [1/2, 2] (-1 if never)."""
        ok = np.nonzero((self.lambda_min >= 0.5) & (self.lambda_max <= 2.0))[0]
        return int(ok[0]) if ok.size else -1

    def iterations_to(self, tol: float) -> int:
        """First k with ||F_k - I||_op <= tol (-1 if never)."""
        res = np.maximum(np.abs(self.lambda_min - 1), np.abs(self.lambda_max - 1))
        ok = np.nonzero(res <= tol)[0]
        return int(ok[0]) if ok.size else -1


def spectral_iteration(f: Callable[[np.ndarray], np.ndarray], dim: int, *, start: np.ndarray | None = None,
                       tol: float = 1e-12, max_iter: int = 200) -> SpectralResult:
    """Solve F(U) = I by U_{k+1} = sym(F(U_k)^{-1/2} U_k) from U_0 = I (or ``start``).

    Stops when ||F(U_k) - I||_op <= tol or after ``max_iter`` updates.

    Parameters
    ----------
    f : callable
        U -> F(U), a (d, d) matrix.
    dim : int
        The dimension d.
    start : ndarray, optional
        U_0 (default the identity).
    tol : float
        The stopping tolerance on ||F(U_k) - I||_op.
    max_iter : int
        The most updates.

    References
    ----------
    Source paper, `eqn:U-spectral-exact`, `eqn:W-spectral-exact`, `lem:spec-fast-converge`.
    """
    dim = check_int("dim", dim, low=1)
    max_iter = check_int("max_iter", max_iter, low=0)
    u = np.eye(dim) if start is None else check_array("start", start, shape=(dim, dim))
    lmins, lmaxs = [], []
    for k in range(max_iter + 1):
        fk = f(u)
        vals = np.linalg.eigvalsh(fk)
        lmins.append(vals[0])
        lmaxs.append(vals[-1])
        res = max(abs(vals[0] - 1), abs(vals[-1] - 1))
        if res <= tol or k == max_iter:
            return SpectralResult(u, float(res), k, np.array(lmins), np.array(lmaxs))
        u = spectral_update(u, fk)
    raise AssertionError("unreachable")  # pragma: no cover


def u_star(features: np.ndarray, weights: np.ndarray | None = None, *, lam: float, tol: float = 1e-12,
           max_iter: int = 200, start: np.ndarray | None = None) -> SpectralResult:
    """U*: the solution of F_LDP(U) = I by the exact spectral iteration.

    Parameters
    ----------
    features, weights : ndarray (n, d) and ndarray (n,), optional
        The distribution p (module docstring).
    lam : float
        lambda > 0.
    tol, max_iter : float, int
        Stopping rule on ||F - I||_op.
    start : ndarray (d, d), optional
        A positive definite start instead of I.

    References
    ----------
    Source paper, `def:FLDP`, `eqn:U-spectral-exact`, `lem:U-L1-covariance`.
    """
    x, w = _check_sample(features, weights)
    lam = check_positive("lam", lam)
    return spectral_iteration(lambda u: f_ldp(u, x, w, lam=lam), x.shape[1], start=start, tol=tol,
                              max_iter=max_iter)


def w_star(features: np.ndarray, weights: np.ndarray | None = None, *, gamma: float, lam: float,
           tol: float = 1e-12, max_iter: int = 200, start: np.ndarray | None = None) -> SpectralResult:
    """W*: the solution of F_DP(W) = I by the exact spectral iteration.

    Parameters
    ----------
    features, weights : ndarray (n, d) and ndarray (n,), optional
        The distribution p (module docstring).
    gamma, lam : float
        gamma >= 0 and lambda >= 0 of F_DP.
    tol, max_iter
        As in :func:`spectral_iteration`.
    start : ndarray, optional
        The first iterate (default the identity).

    References
    ----------
    Source paper, `def:FJDP`, `eqn:W-spectral-exact`, `lem:Wstar-properties`.
    """
    x, w = _check_sample(features, weights)
    gamma = check_real("gamma", gamma, low=0.0)
    lam = check_positive("lam", lam)
    return spectral_iteration(lambda m: f_dp(m, x, w, gamma=gamma, lam=lam), x.shape[1], start=start, tol=tol,
                              max_iter=max_iter)


def second_moment(features: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Sigma = E_p[phi phi^T] of the distribution p given as ``features, weights`` (module docstring)."""
    x, w = _check_sample(features, weights)
    return symmetric_part((x * w[:, None]).T @ x)


def price_of_privacy(features: np.ndarray, weights: np.ndarray | None = None, *, epsilon: float,
                     n_samples: int, c_gamma: float = 1.0, c_lambda: float = 1.0) -> float:
    """Price of privacy PoP ~ tr(Sigma W*^2) / d at gamma = c_gamma/(eps sqrt(T)), lambda = c_lambda/sqrt(T).

    PoP compares the optimal (epsilon, delta)-DP squared Sigma-error with T samples to the non-private
    d/T; it is O(1) once T >~ kappa(p)^2 log(1/delta) / epsilon^2. The paper fixes gamma and lambda
    only up to constants (and factors of d and log(1/delta)); ``c_gamma`` and ``c_lambda`` expose them.

    Parameters
    ----------
    features, weights : ndarray (n, d) and ndarray (n,), optional
        The distribution p (module docstring).
    epsilon : float
        The privacy budget epsilon > 0.
    n_samples : int
        The sample size T.
    c_gamma, c_lambda : float
        The constants of gamma and lambda.

    References
    ----------
    Source paper, `eq:PoP`, `prop:JDP-minimax-optimal`.
    """
    x, w = _check_sample(features, weights)
    eps = check_positive("epsilon", epsilon)
    t = check_int("n_samples", n_samples, low=1)
    gamma = check_positive("c_gamma", c_gamma) / (eps * np.sqrt(t))
    lam = check_positive("c_lambda", c_lambda) / np.sqrt(t)
    wm = w_star(x, w, gamma=gamma, lam=lam, tol=1e-10).matrix
    sigma = second_moment(x, w)
    return float(np.trace(sigma @ wm @ wm) / x.shape[1])


def kappa(features: np.ndarray, weights: np.ndarray | None = None, *, c: float = 0.5) -> float:
    """kappa_c(p) = inf{M : E[phi phi^T 1{||phi||_{Sigma^+} <= M}] >= c Sigma} (kappa(p) = kappa_{1/2}).

    Computed exactly on a weighted sample: the candidate thresholds are the atoms' Sigma^+-norms, and
    the truncated second moment is monotone in M, so a bisection over the sorted norms finds the smallest.

    Parameters
    ----------
    features, weights : ndarray (n, d) and ndarray (n,), optional
        The distribution p (module docstring).
    c : float
        The level c in (0, 1).

    References
    ----------
    Source paper, `def:kappa-p`, `lem:kappa-p`.
    """
    x, w = _check_sample(features, weights)
    c = check_real("c", c, low=0.0, high=1.0)
    sigma = second_moment(x, w)
    pinv = np.linalg.pinv(sigma, rcond=1e-12, hermitian=True)
    norms = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", x, pinv, x), 0.0))
    order = np.argsort(norms)
    xs, ws, ns = x[order], w[order], norms[order]
    # Compare on the range of Sigma: A >= c Sigma iff Sigma^{+1/2} (A - c Sigma) Sigma^{+1/2} >= 0 there.
    half = psd_power(pinv, 0.5, floor=0.0) if np.any(pinv) else pinv
    target = c * half @ sigma @ half

    def ok(i: int) -> bool:  # threshold = ns[i] includes atoms 0..i (ties included below)
        upto = np.searchsorted(ns, ns[i], side="right")
        part = (xs[:upto] * ws[:upto, None]).T @ xs[:upto]
        diff = half @ part @ half - target
        return bool(np.linalg.eigvalsh(symmetric_part(diff))[0] >= -1e-10)

    lo, hi = 0, len(ns) - 1
    if not ok(hi):  # pragma: no cover - the full sum equals Sigma >= c Sigma
        return float("inf")
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return float(ns[lo])


def l1_covariance_norm(theta: np.ndarray, features: np.ndarray, weights: np.ndarray | None = None) -> float:
    """E_p |<phi, theta>| for a direction ``theta`` (d,) (the quantity U*^{-1} approximates,
    `lem:U-L1-covariance`; p given as ``features, weights``, module docstring)."""
    x, w = _check_sample(features, weights)
    return float(np.abs(x @ np.asarray(theta, dtype=float)) @ w)
