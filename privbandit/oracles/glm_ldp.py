"""IW-GLM-LDP: information-weighted generalized linear regression under local DP.

The first half of the users learn U with Spectral-Iteration-LDP (`alg:U-LDP`, shared with
:mod:`.iw_ldp`). The second half run projected SGD on the reweighted integral loss in the variable
w = U^{-1} theta (`alg:LDP-SGD`):

    L(w) = E[ l_nu(<U phi, w>, y) / ||U phi|| ] + (mu_nu lambda / 2) ||w||_U^2,
    grad L(w) = E[ U phi / ||U phi|| (nu(<U phi, w>) - y) ] + lambda mu_nu U w,

which is (mu_nu/2)-strongly convex on W_U = {w : ||U w|| <= 1} when F_LDP(U) ~ I; its minimiser is
within 4 lambda of U^{-1} theta* (`lem:LDP-l1-regression-approx`). Each SGD step j uses one stage of
users: each sends U phi/||U phi|| (clip_1(nu(<U phi, w_j>)) - y) (norm <= 2; predictions are clipped to
the reward range [-1, 1], which leaves the gradient at theta* unchanged) through a Gaussian channel,
the learner adds the public regulariser gradient and steps w_{j+1} = Proj_{W_U}(w_j - eta_j g_j) with
eta_j = 2 / (mu_nu j). theta_hat = U w (`alg:LDP-L1-regression`).

Constants. ``"theory"``: one user per step (the source's SGD), the spectral K and lambda of
:mod:`.iw_ldp`, the last iterate, and the width 4 lambda + sqrt(16 G^2 / ((mu_nu/2)^2 N confidence))
on ||U^{-1}(theta_hat - theta*)|| (`prop:LDP-GD` with Chebyshev; G^2 = (2 + lambda mu_nu)^2 + d s^2).
``"practical"`` (default): 256 mini-batch steps, step eta_j = 1/(mu_nu j), the average of the last half
of the iterates (Rakhlin, Shamir & Sridharan 2012), and width c (lambda + z s / (mu_nu sqrt(N))) with
c = 2 and z the normal quantile at ``confidence``.

Privacy. One release per user: spectral users as in :mod:`.iw_ldp` (Frobenius sensitivity 2B), SGD
users one Gaussian at L2 sensitivity 4, analytic calibration for (epsilon, delta).

References
----------
Source paper, `alg:LDP-SGD`, `alg:LDP-L1-regression`, `prop:LDP-GD`, `thm:LDP-L1-regression`,
`lem:LDP-l1-regression-approx`, `def:GLM`, `def:cL-LDP-GLM`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from scipy import optimize

from .._validation import POSITIVE_INT, ParameterConstraints
from ..links import Link
from ..privacy import GaussianMechanism, LocalRandomizer
from .base import Estimate, stage_sizes_split, two_sided_quantile
from .iw_ldp import (
    SpectralLDPFit,
    SpectralLDPOracle,
    padded,
    unit_directions,
    vector_norm,
)
from .registry import register_oracle

PRACTICAL_SGD_STEPS = 256


def project_ellipsoid(v: np.ndarray, u: np.ndarray,
                      eig: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """Euclidean projection of ``v`` onto {w : ||U w|| <= 1} for a symmetric positive definite U.

    In U's eigenbasis the projection is w_i = v_i / (1 + mu u_i^2) with the mu >= 0 that puts w on the
    boundary (mu = 0 when v is already inside). ``eig`` = ``np.linalg.eigh(u)`` may be passed to reuse it.
    """
    vals, vecs = eig if eig is not None else np.linalg.eigh(u)
    return _project_in_basis(v, u, np.maximum(vals, 0.0), vecs)


def _project_in_basis(v: np.ndarray, u: np.ndarray, vals: np.ndarray, vecs: np.ndarray) -> np.ndarray:
    """:func:`project_ellipsoid` given U's eigenvalues already clipped at 0 (``np.maximum(vals, 0.0)``) and
    eigenvectors: the same operations after that clip, which an SGD run computes once for its fixed U."""
    c = vecs.T @ v
    vc = vals * c
    if vector_norm(vc) <= 1.0:
        return v

    def excess(mu: float) -> float:         # vals * c / (1.0 + mu * vals * vals), vals * c computed once
        q = vals * mu
        q *= vals
        q += 1.0
        np.divide(vc, q, out=q)
        return vector_norm(q) - 1.0

    hi = 1.0
    while excess(hi) > 0:
        hi *= 4.0
    mu = optimize.brentq(excess, 0.0, hi, xtol=1e-14, rtol=1e-12)
    w = vecs @ (c / (1.0 + mu * vals * vals))
    norm = vector_norm(u @ w)
    return w / norm if norm > 1.0 else w


@dataclass(frozen=True)
class GLMGradientStatistic:
    """phi, y -> U phi / ||U phi|| (clip_1(nu(<U phi, w>)) - y); norm <= 2."""

    u: np.ndarray
    w: np.ndarray
    link: Link

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        ux = x @ self.u
        dirs, _ = unit_directions(ux)
        pred = np.minimum(np.maximum(self.link(ux @ self.w), -1.0), 1.0)        # np.clip's values, less its dispatch
        return dirs * (pred - y)[:, None]


class IWGLMLDPFit(SpectralLDPFit):
    """Spectral stages, then one stage per SGD step."""

    oracle: IWGLMLDP

    def __init__(self, *args) -> None:
        super().__init__(*args)
        cfg = self.oracle
        n_u, z = self._start_spectral(cfg.u_fraction)
        n_sgd = self.n_rounds - n_u
        steps = cfg.sgd_steps if cfg.sgd_steps is not None else (
            n_sgd if cfg.constants == "theory" else PRACTICAL_SGD_STEPS)
        steps = max(1, min(steps, max(n_sgd, 1)))
        self.stage_sizes = self.stage_sizes[:-1] + stage_sizes_split(n_sgd, [1.0 / steps] * steps)  # one per step
        self.n_sgd = n_sgd
        self._grad_radius = padded(2.0)
        self._grad_channel = GaussianMechanism(sensitivity=2.0 * self._grad_radius, sigma=z * 2.0 * self._grad_radius)
        self.w = np.zeros(self.dim)
        self._sum = np.zeros(self.dim)      # the current SGD step's randomized gradients, summed
        self._step = 0
        self._iterates: list[np.ndarray] = []
        self._sgd_u: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def _fixed_u(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """U once the spectral stages are over (a read-only copy, shared by every SGD stage's statistic, as the
        per-stage copies were equal), its eigenvalues clipped at 0 and its eigenvectors: computed once per fit."""
        if self._sgd_u is None:
            u = self.u.copy()
            u.setflags(write=False)
            vals, vecs = np.linalg.eigh(self.u)
            self._sgd_u = (u, np.maximum(vals, 0.0), vecs)
        return self._sgd_u

    def _later_randomizer(self, stage: int) -> LocalRandomizer:
        return LocalRandomizer(GLMGradientStatistic(self._fixed_u()[0], self.w.copy(), self.link), self._grad_radius,
                               self._grad_channel, self.bound)

    def _close_stage(self, stage: int) -> None:
        if stage < self.n_spectral_stages:
            super()._close_stage(stage)
            return
        if self._count == 0:
            return
        mu = self.link.mu
        g = self._sum                         # g_sum / n + (lambda mu) (U w), eta g: in place, the same values
        g /= self._count
        reg = self.u @ self.w
        reg *= self.lam * mu
        g += reg
        self._step += 1
        g *= (2.0 if self.oracle.constants == "theory" else 1.0) / (mu * self._step)
        _, vals, vecs = self._fixed_u()         # U is fixed once the spectral stages are over
        self.w = _project_in_basis(self.w - g, self.u, vals, vecs)
        self._iterates.append(self.w)
        self._sum = np.zeros(self.dim)
        self._count = 0

    def _estimate(self) -> Estimate:
        cfg, d = self.oracle, self.dim
        if cfg.constants == "theory" or not self._iterates:
            w = self.w
        else:
            tail = self._iterates[len(self._iterates) // 2:]
            w = project_ellipsoid(np.mean(tail, axis=0), self.u)
        theta = self.u @ w
        norm = np.linalg.norm(theta)
        if norm > 1.0:  # rounding only: ||U w|| <= 1 on W_U
            theta = theta / norm
        mu, s, n = self.link.mu, self._grad_channel.sigma, max(self.n_sgd, 1)
        if cfg.constants == "theory":
            g2 = (2.0 + self.lam * mu) ** 2 + d * s * s
            c = 4.0 * self.lam + math.sqrt(16.0 * g2 / ((mu / 2.0) ** 2 * n * cfg.confidence))
        else:
            zq = two_sided_quantile(cfg.confidence)
            c = 2.0 * (self.lam + zq * s / (mu * math.sqrt(n)))
        if cfg.width_multiplier is not None:
            c *= cfg.width_multiplier
        return Estimate(theta, self.link, self.u, c,
                        info=dict(lam=self.lam, steps=self._step, spectral_trace=list(self.trace), w=w))


@register_oracle
@dataclass(frozen=True)
class IWGLMLDP(SpectralLDPOracle):
    """IW-GLM-LDP: Spectral-Iteration-LDP for U, then LDP projected SGD on the reweighted GLM loss.

    Parameters
    ----------
    privacy, constants, stages, lam, u_fraction, confidence
        As in :class:`~privbandit.oracles.iw_ldp.SpectralLDPOracle` (``constants``: see the module docstring).
    width_multiplier : float, optional
        Multiplies the width constant.
    sgd_steps : int, optional
        Number of SGD steps (theory: one per user; practical: 256 mini-batches).

    Notes
    -----
    The link's ``mu`` (lower bound on nu') sets the strong convexity mu_nu/2; predictions are clipped to
    [-1, 1] before the residual, so the gradient statistic has norm <= 2 for any link.

    References
    ----------
    Source paper, `alg:LDP-L1-regression`, `alg:LDP-SGD`, `thm:LDP-L1-regression`.
    """

    sgd_steps: int | None = None

    name: ClassVar[str] = "iw-glm-ldp"
    privacy_models: ClassVar[tuple[str, ...]] = ("ldp",)
    fit_class: ClassVar[type] = IWGLMLDPFit
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **SpectralLDPOracle.parameter_constraints, "sgd_steps": [None, POSITIVE_INT]}
