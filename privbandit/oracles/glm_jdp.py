"""IW-GLM-DP: information-weighted generalized linear regression under joint DP.

In words: half the epoch's users learn W privately (Spectral-Iteration-DP, `alg:W-JDP`). On the other
half (N users) the curator (1) releases the information matrix
H = (1/N) sum W^{1/2} phi phi^T W^{1/2} / (1 + gamma ||W phi||) + lambda I with SymPriv and checks
H~ >= W^{-1}/4 (if not, the output is theta_hat = 0); (2) minimises the information-weighted integral loss
in the variable w = W^{-1} theta over {||W w|| <= 1},

    L^(w) = (1/N) sum l_nu(<W phi_t, w>, y_t) / (1 + gamma ||W phi_t||) + (mu/2) ||W^{1/2} w||^2_{lambda I + (H~ - H)},

with l_nu(t, y) = -y t + int_0^t nu(s) ds, which the H check makes (mu/4)-strongly convex; and (3) releases
the minimiser with Gaussian output perturbation and returns theta_hat = W w~. The regression rows are
kept (O(N d) memory: an ERM).

Privacy (`appdx:JDP-l1-regression`). Step (1): Frobenius sensitivity 2B/(gamma N) (each term has norm
< B/gamma). Step (2)+(3), for any fixed H~ passing the check: replacing one row moves grad L^ by at most
eps = 2 (R_nu + mu B) / (gamma N) uniformly on the domain (R_nu = max_{|t| <= B} |nu(t)| + 1 bounds
|nu - y|; the H - H~ term moves by mu B/(gamma N) per row), so the exact minimisers move by at most
4 eps / mu = 8 (R_nu / mu + B) / (gamma N) <= Delta_N / 2 with the paper's Delta_N = 32 (1/mu + B)/(gamma N)
(here with 1/mu replaced by max(1, R_nu / 2) / mu, equal for links into [-1, 1] and B <= 1). The solver stops
only when a Frank-Wolfe duality gap certifies ||w - w^|| <= Delta_N / 4 (strong convexity), so the output
has L2 sensitivity Delta_N. The two releases touch the same users: each gets multiplier sqrt(2) z*, which
composes exactly to (epsilon, delta).

N is the stage's *planned* size throughout (H, S, the loss's 1/N and Delta_N), also when ``result()`` comes
before the stage is full: the per-row bounds above are over N whatever number m <= N of rows arrived, so the
sensitivities hold for a partly filled stage (dividing the data term by m instead would move the output by
up to N/m times as much).

References
----------
Source paper, `alg:JDP-L1-regression`, `alg:JDP-SGD`, `thm:JDP-L1-regression`, `def:GLM`, `def:cL-JDP-GLM`,
`lem:SC-func`, `appdx:proof-JDP-gen-linear` (width 8 L_nu lambda ||W phi||).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
from scipy import optimize

from .._validation import check_int
from ..linalg import psd_power, psd_sqrt, symmetric_part
from ..links import Link
from ..privacy import GaussianMechanism, SymmetricGaussianMechanism
from .base import EpochFit, Estimate
from .iw_jdp import SpectralStagesFit, TwoPhaseIWOracle, iw_weights
from .registry import register_oracle

GLM_THEORY_WIDTH = 8.0
"""c in the width c L_nu lambda ||W phi|| of `appdx:proof-JDP-gen-linear`."""

GLM_PRACTICAL_C_GAMMA = 32.0
"""Practical c_gamma of IW-GLM-DP. The output noise lives in w = W^{-1} theta and is mapped back through W
(||W|| up to 1/lambda), and Delta_N carries the source's factor 32, so gamma must be about 30x larger than
for IW-Regression-DP before the noise falls below lambda (the event ||z|| <= lambda/4 of the proof)."""

ERM_TOL = 1e-6
"""The ERM is always solved to within min(Delta_N / 4, ERM_TOL) (a smaller tolerance only helps privacy)."""


def link_residual_bound(link: Link, bound: float) -> float:
    """R_nu = max_{|t| <= B} |nu(t)| + 1 >= |nu(<phi, theta>) - y| for ||theta|| <= 1, |y| <= 1 (nu monotone)."""
    return float(max(abs(float(link(np.array(bound)))), abs(float(link(np.array(-bound)))))) + 1.0


def trust_region_step(q: np.ndarray, evals: np.ndarray, c: np.ndarray) -> np.ndarray:
    """argmin over ||theta|| <= 1 of c^T theta + theta^T M theta / 2, with M = Q diag(evals) Q^T positive definite."""
    cq = q.T @ c
    coef = cq / evals
    if float(coef @ coef) <= 1.0:
        return -(q @ coef)
    norm_c = float(np.linalg.norm(cq))

    def excess(nu: float) -> float:
        return float(np.linalg.norm(cq / (evals + nu))) - 1.0

    nu = optimize.brentq(excess, 0.0, norm_c, xtol=1e-14, rtol=1e-14)
    theta = -(q @ (cq / (evals + nu)))
    nrm = float(np.linalg.norm(theta))
    return theta / nrm if nrm > 1.0 else theta


@dataclass(frozen=True)
class ERMResult:
    """Output of :func:`solve_iw_erm`: the minimiser's approximation and its certificate."""

    w: np.ndarray
    gap: float
    iterations: int
    certified: bool


def solve_iw_erm(u: np.ndarray, weights: np.ndarray, y: np.ndarray, link: Link, a_mat: np.ndarray,
                 s_emp: np.ndarray, w_mat: np.ndarray, tol: float, *, n: int) -> ERMResult:
    """Minimise L^(w) over {||W w|| <= 1} to a certified distance ``tol`` from the exact minimiser.

    Parameters
    ----------
    u : ndarray (m, d)
        Rows W phi_t (m <= N rows arrived).
    weights : ndarray (m,)
        1 / (1 + gamma ||W phi_t||).
    y : ndarray (m,)
        Rewards.
    link : Link
        nu, with mu <= nu' <= L on |t| <= B.
    a_mat : ndarray (d, d)
        A = W^{1/2} H~ W^{1/2} (>= I/4 after the H check).
    s_emp : ndarray (d, d)
        S = (1/N) sum weights u u^T (the loss's Hessian is between mu S and L S).
    w_mat : ndarray (d, d)
        W.
    tol : float
        Required ||w - w^||.
    n : int
        N, the divisor of the data term: the stage's *planned* size, the N of ``s_emp``, H and Delta_N.
        It must not be the number of rows that arrived (m): a row's pull on the gradient is bounded by
        1/N, and dividing by m < N would move the minimiser by N/m times Delta_N / 2.

    Notes
    -----
    The Hessian of L^ lies between mu A and M = mu A + (L - mu) S, so projected steps in the metric M (each a
    trust-region problem in theta = W w) converge linearly with ratio 1 - 1/kappa, kappa <= 1 +
    (L/mu - 1)(B/gamma) lambda_max(A^{-1/2} W A^{-1/2}); for the identity link M is the Hessian and one step is
    exact. The loop stops when the Frank-Wolfe gap g(w) = <grad, w> + ||W^{-1} grad|| >= L^(w) - L^(w^)
    satisfies g <= mu tol^2 / 8, which by (mu/4)-strong convexity (`lem:SC-func`) gives ||w - w^|| <= tol.
    """
    n = check_int("n", n, low=max(1, y.shape[0]))
    mu, lip = link.mu, link.lipschitz
    r_mat = a_mat - s_emp
    m_mat = symmetric_part(mu * a_mat + (lip - mu) * s_emp)
    w_inv = psd_power(w_mat, -1.0, floor=0.0)
    m_theta = symmetric_part(w_inv @ m_mat @ w_inv)
    evals, q = np.linalg.eigh(m_theta)
    evals = np.maximum(evals, 1e-300)
    target = mu * tol ** 2 / 8.0

    def grad(w: np.ndarray) -> np.ndarray:
        r = (link(u @ w) - y) * weights
        return u.T @ r / n + mu * (r_mat @ w)

    w = np.zeros(w_mat.shape[0])
    g = grad(w)
    gap = float(g @ w + np.linalg.norm(w_inv @ g))
    kappa = float(np.linalg.eigvalsh(symmetric_part(m_mat))[-1] / (mu * np.linalg.eigvalsh(a_mat)[0]))
    max_iter = int(min(max(math.ceil(kappa * math.log(max(gap / target, 1.0))) + 2, 2), 100_000))
    it = 0
    while gap > target and it < max_iter:
        theta = trust_region_step(q, evals, w_inv @ g - m_theta @ (w_mat @ w))
        w = w_inv @ theta
        g = grad(w)
        gap = float(g @ w + np.linalg.norm(w_inv @ g))
        it += 1
    return ERMResult(w=w, gap=max(gap, 0.0), iterations=it, certified=gap <= target)


class IWGLMDPFit(SpectralStagesFit):
    """Stages 0..K-1 learn W (streamed); stage K keeps its rows for the ERM.

    Attributes
    ----------
    erm : ERMResult or None
        The solver's certificate (duality gap, iterations) of the last ERM: computed from raw rows, so it is
        not private and stays on the fit; the Estimate's ``info`` has released values and public parameters only.
    """

    oracle: IWGLMDP

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        cfg = self.oracle
        mu = self.link.mu
        self.r_nu = link_residual_bound(self.link, self.bound)
        own = dict(c_gamma=GLM_PRACTICAL_C_GAMMA) if cfg.constants == "practical" else dict(c_width=GLM_THEORY_WIDTH)
        params = cfg.parameters(self.n_rounds, self.dim, self.bound, w_fraction=cfg.w_fraction, mu=mu,
                                sens_scale=self.bound + 1.0 / mu, **own)     # (the user's c_gamma, c_width win)
        self._init_spectral(params, cfg.w_fraction)
        self._x: list[np.ndarray] = []
        self._y: list[np.ndarray] = []
        self._theta = np.zeros(self.dim)
        self._diag: dict[str, Any] = dict(fallback="no regression rows")     # until a regression stage closes
        self.erm: ERMResult | None = None       # raw rows' certificate: on the fit, never on the Estimate

    @property
    def delta_n(self) -> float:
        """The output's L2 sensitivity Delta_N = 32 (max(1, R_nu/2)/mu + B) / (gamma N)."""
        start, stop = self.stage_range(self.n_w_stages)
        n = max(stop - start, 1)
        return 32.0 * (max(1.0, self.r_nu / 2.0) / self.link.mu + self.bound) / (self.params.gamma * n)

    def _add_regression_rows(self, x: np.ndarray, y: np.ndarray) -> None:
        self._x.append(x)
        self._y.append(y)

    def _close_regression_stage(self, stage: int) -> None:
        start, stop = self.stage_range(stage)
        n = stop - start
        if n == 0:       # no regression rows: theta_hat = 0 (the _diag set in __init__ stands)
            return
        d, lam, gamma = self.dim, self.params.lam, self.params.gamma
        x = np.concatenate(self._x) if self._x else np.zeros((0, d))
        y = np.concatenate(self._y) if self._y else np.zeros(0)
        self._x, self._y = [], []
        mult = self.oracle.multiplier(2)
        w_half = psd_sqrt(self.w)
        u = x @ self.w
        wts = iw_weights(u, gamma)
        half = x @ w_half
        h = symmetric_part((half * wts[:, None]).T @ half / n) + lam * np.eye(d)
        sens_h = 2.0 * self.bound / (gamma * n)
        mech_h = SymmetricGaussianMechanism(sensitivity=sens_h, sigma=mult * sens_h)
        h_noisy = self._release(mech_h, h, start, stop, "H check")
        sens_w = self.delta_n
        mech_w = self.hooked(GaussianMechanism(sensitivity=sens_w, sigma=mult * sens_w))
        # Charged here, before the H check, on purpose: the budget is split between the H check and the output
        # (multiplier(2)) whatever the check decides, so the ledger, and the guarantee it proves, are the same
        # on every branch (check failed, ERM refused, output drawn below). Hence no _release for w.
        self.ledger.record(start, stop, mech_w.ledger_entry(), label=f"{self.oracle.name} output w")
        a_mat = symmetric_part(w_half @ h_noisy @ w_half)
        a_min = float(np.linalg.eigvalsh(a_mat)[0])
        if a_min < 0.25:  # H~ >= W^{-1}/4 fails: output theta_hat = 0 (no data-dependent release)
            self._diag = dict(h_check=False, a_min=a_min)
            return
        s_emp = symmetric_part((u * wts[:, None]).T @ u / n)
        res = solve_iw_erm(u, wts, y, self.link, a_mat, s_emp, self.w, min(sens_w / 4.0, ERM_TOL), n=n)
        if not res.certified:
            raise RuntimeError("the IW-GLM ERM did not reach its certified accuracy; the output's sensitivity "
                               "cannot be guaranteed, so nothing is released")
        self.erm = res
        w_noisy = mech_w.release(res.w, self.rng)     # recorded above, before the H check
        self._theta = self.w @ w_noisy
        self._diag = dict(h_check=True, a_min=a_min, noise_sd_w=mech_w.sigma, noise_sd_h=mech_h.sigma,
                          delta_n=sens_w)

    def _estimate(self) -> Estimate:
        p = self.params
        info = dict(self._info(), w=self.w.copy(), **self._diag)
        if not self._diag.get("h_check", False):  # theta_hat = 0: the trivial radius ||phi|| (||theta*|| <= 1)
            return Estimate(np.zeros(self.dim), self.link, np.eye(self.dim), 1.0, info=info)
        return Estimate(self._theta, self.link, self.w, p.c_width * p.lam, info=info)


@register_oracle
@dataclass(frozen=True)
class IWGLMDP(TwoPhaseIWOracle):
    """IW-GLM-DP (`alg:JDP-L1-regression` with `alg:JDP-SGD`): private W, H check, certified ERM, output noise.

    The width is c * L_nu * lambda * ||W phi|| (``Estimate.width`` applies L_nu), c = 8 in theory
    (`appdx:proof-JDP-gen-linear`); lambda carries the 1/mu_nu of `thm:JDP-L1-regression`.

    Parameters
    ----------
    privacy : PrivacySpec
        Joint DP budget per user.
    constants : {"practical", "theory"}
        Parameter regime (:func:`~privbandit.oracles.iw_jdp.iw_parameters` with B' = B + 1/mu_nu).
    confidence, calibration, c_lambda, c_gamma, c_width, n_stages, lam, gamma :
        As for :class:`~privbandit.oracles.iw_jdp.SpectralDP`.
    w_fraction : float
        Share of users that learn W (1/2 in the source).

    Notes
    -----
    Sensitivities: H at Frobenius 2B/(gamma N); the output w at L2 Delta_N = 32 (max(1, R_nu/2)/mu + B)/(gamma N)
    (module docstring). The two releases on the ERM users each use multiplier sqrt(2) z*.

    Which noise: the output's Gaussian is calibrated to L2 sensitivity Delta_N, i.e. the privacy proof's
    Priv[Delta_N/2] (the proof of `thm:JDP-L1-regression`: mechanism (b); the paper's Priv[Delta] covers
    L2 sensitivity 2 Delta, `def:Guassian-channel`). The box of `alg:JDP-SGD` prints Priv[2 Delta_N] (4x the
    noise the proof needs) and the utility proof uses variance 16 Delta_N^2 sigma_alpha^2 (Priv[4 Delta_N]);
    privbandit follows the privacy proof, which is all the privacy guarantee needs (PAPER.md, "Where the
    text is wrong"). N is the stage's planned size, also for a partly filled stage (module docstring).

    References
    ----------
    Source paper, `alg:JDP-L1-regression`, `alg:JDP-SGD`, `thm:JDP-L1-regression`.

    Examples
    --------
    >>> import numpy as np
    >>> from privbandit.links import make_link
    >>> from privbandit.oracles import make_oracle
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1.0, 1.0, (2000, 3)) / np.sqrt(3)
    >>> link = make_link("logistic")                  # nu(z) = tanh(z)
    >>> y = np.where(rng.random(2000) < (1 + link(x @ [0.6, -0.8, 0.0])) / 2, 1.0, -1.0)
    >>> est = make_oracle("iw-glm-dp", epsilon=1.0, delta=1e-5).fit(x, y, link=link, rng=1)
    >>> est.theta.shape, est.link.name, est.mean(x[:5]).shape
    ((3,), 'logistic', (5,))
    """

    name: ClassVar[str] = "iw-glm-dp"
    fit_class: ClassVar[type[EpochFit]] = IWGLMDPFit
