"""Local sufficient-statistics perturbation (SSP): the baseline LDP linear regression.

Every user privatises its own sufficient statistics (phi y, phi phi^T) (Zheng et al. 2020, LDP-UCB;
`def:SSP` in its local form); the learner sums the noisy statistics and solves the same noise-shifted
ridge system as the central SSP oracle (:func:`privbandit.oracles.ssp.ssp_estimate`, reused with the
local noise level). The channel is smooth in phi, so the error scales with 1/E[phi phi^T] where
information weighting scales with the L1 covariance (`prop:OLS-fail-local-gen` proves it as a lower
bound in d = 1, for the worst theta*, for covariates with E x = 0).

Privacy (a fair baseline: the same analytic Gaussian as every other oracle). Each user releases the
concatenation (phi y, vec(phi phi^T)), of norm <= sqrt(B^2 + B^4), through one Gaussian mechanism at L2
sensitivity 2 sqrt(B^2 + B^4) calibrated for (epsilon, delta): one release per user, no budget split
(at B = 1 this is the central SSP's sensitivity sqrt(2) (B^2 + 1) too). After symmetrising, the summed
Gram matrix has noise of standard deviation at most s sqrt(n) per entry (s the channel's sigma), the
level passed to the shared solver.

References
----------
Source paper, `def:SSP`, `prop:OLS-fail-local-gen`, `tab:comp`; Zheng, Chen, Sun & Wang (2020).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import POSITIVE, UNIT_OPEN, Boolean, ParameterConstraints
from ..linalg import psd_project, symmetric_part
from ..privacy import GaussianMechanism, LocalRandomizer, analytic_noise_multiplier
from .base import Estimate, Oracle, SummingLocalFit
from .iw_ldp import ball_least_squares, padded
from .registry import register_oracle
from .ssp import ssp_estimate


@dataclass(frozen=True)
class SufficientStatistic:
    """phi, y -> (phi y, vec(phi phi^T)); norm <= sqrt(B^2 + B^4) for ||phi|| <= B, |y| <= 1."""

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        outer = x[:, :, None] * x[:, None, :]
        return np.concatenate([x * y[:, None], outer.reshape(x.shape[0], -1)], axis=1)


class SSPLocalFit(SummingLocalFit):
    """Running sums of the users' noisy sufficient statistics."""

    oracle: SSPLocal

    def __init__(self, *args) -> None:
        super().__init__(*args)
        b = self.bound
        self._radius = padded(math.sqrt(b * b + b ** 4))
        z = analytic_noise_multiplier(self.oracle.privacy.epsilon, self.oracle.privacy.delta)
        channel = GaussianMechanism(sensitivity=2.0 * self._radius, sigma=z * 2.0 * self._radius)
        self._randomizer_ = LocalRandomizer(SufficientStatistic(), self._radius, channel, b)
        self._sum = np.zeros(self.dim + self.dim * self.dim)

    def _estimate(self) -> Estimate:
        cfg, d = self.oracle, self.dim
        aug = np.zeros((d + 1, d + 1))
        aug[:d, :d] = symmetric_part(self._sum[d:].reshape(d, d))
        aug[:d, d] = aug[d, :d] = self._sum[:d]
        noise_sd = self._randomizer_.channel.sigma * math.sqrt(max(self._count, 1))
        if not cfg.shift:
            n = max(self._count, 1)
            gram = psd_project(aug[:d, :d] / n) + cfg.lam / n * np.eye(d)
            theta = ball_least_squares(gram, aug[:d, d] / n) if self._count else np.zeros(d)
            return Estimate(theta, self.link, np.eye(d), 2.0 * cfg.width_multiplier,
                            info=dict(users=self._count, shift=False))
        return ssp_estimate(aug, noise_sd, link=self.link, lam=cfg.lam, confidence=cfg.confidence,
                            width_multiplier=cfg.width_multiplier, info=dict(users=self._count))


@register_oracle
@dataclass(frozen=True)
class SSPLocal(Oracle):
    """Local sufficient-statistics perturbation (LDP-UCB's regression step), analytic Gaussian calibration.

    Parameters
    ----------
    privacy : PrivacySpec
        Local DP; each user spends (epsilon, delta) once.
    lam : float
        Ridge lambda on top of the noise shift of :func:`~privbandit.oracles.ssp.ssp_estimate`.
    width_multiplier : float
        Multiplies the width.
    shift : bool
        True (default): the central SSP's noise-shifted ridge and confidence ellipsoid. False: the plain
        solve of the noisy normal equations, argmin_{||theta|| <= 1} ||(PSD(G_hat) + (lam/n) I) theta - b_hat||
        (in d = 1, clip_1(b_hat / G_hat): the natural smooth estimator of `prop:OLS-fail-local-gen`), with
        only the trivial width 2 ||phi||.
    confidence : float
        Statistical failure probability in the width.

    References
    ----------
    Source paper, `def:SSP`, `tab:comp`; Zheng et al. (2020).
    """

    lam: float = 1.0
    width_multiplier: float = 1.0
    confidence: float = 0.05
    shift: bool = True

    name: ClassVar[str] = "ssp-local"
    privacy_models: ClassVar[tuple[str, ...]] = ("ldp",)
    fit_class: ClassVar[type] = SSPLocalFit
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **Oracle.parameter_constraints, "lam": [POSITIVE], "width_multiplier": [POSITIVE], "confidence": [UNIT_OPEN],
        "shift": [Boolean()]}
