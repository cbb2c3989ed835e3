"""Locally private clipped SGD: dimension-free LDP linear regression.

K epochs of N = T/K users. In epoch k every user sends the clipped gradient
g_t = phi_t (clip_R(<theta_k, phi_t>) - y_t) through a Gaussian channel; the learner averages them and
takes the step theta_{k+1} = theta_k - eta g_k, with no projection (the iterate is improper: its norm
grows like sqrt(d) from the noise, but its Sigma-norm error does not). The clipped prediction keeps
||g_t|| <= B (R + 1), so the noise is calibrated once, and <phi, noise> ~ N(0, s^2 ||phi||^2) is small
for every phi whatever d is: the error is O((log(T)/(epsilon^2 T))^{1/6}) in Sigma-norm, free of d
(`thm:improper-LDP`).

Constants. The source takes eta = 1, R = 2 and K = c (T / (sigma_alpha^2 log(T/delta)))^{1/3} with an
absolute constant c; :func:`ldp_sgd_epochs` sets K for either ``constants`` (c = 1).

Width. The oracle has no pointwise confidence ellipsoid (dimension-free guarantees are in Sigma-norm
only), so the Estimate carries the trivial valid radius |<phi, theta_hat - theta*>| <= (||theta_hat|| + 1) ||phi||
(||theta*|| <= 1); use it with agents that do not need widths (SquareCB).

Privacy. One Gaussian release per user at L2 sensitivity 2 B (R + 1), analytic calibration for
(epsilon, delta); users of different epochs are disjoint.

References
----------
Source paper, `alg:LDP-improper-GD`, `thm:improper-LDP`, `prop:unbounded-converge`, `sec:unbounded`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import POSITIVE, POSITIVE_INT, UNIT_OPEN, Options, ParameterConstraints
from ..privacy import GaussianMechanism, LocalRandomizer, analytic_noise_multiplier
from .base import CONSTANTS, Constants, Estimate, Oracle, SummingLocalFit, stage_sizes_split
from .iw_ldp import padded
from .registry import register_oracle


@dataclass(frozen=True)
class ClippedGradientStatistic:
    """phi, y -> phi (clip_R(<theta, phi>) - y); norm <= ||phi|| (R + 1)."""

    theta: np.ndarray
    clip: float

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        pred = np.minimum(np.maximum(x @ self.theta, -self.clip), self.clip)    # np.clip's values, less its dispatch
        return x * (pred - y)[:, None]


def ldp_sgd_epochs(n_users: int, epsilon: float, delta: float, constants: str, confidence: float,
                   bound: float = 1.0, clip: float = 2.0) -> int:
    """K of `thm:improper-LDP`: (T / (sigma^2 L))^{1/3}, at least 1 and at most T.

    theory: sigma = sigma_alpha = 2 z (z the analytic multiplier, so 2 z is the noise std per unit of
    half-diameter, the paper's sigma_alpha) and L = log(T / confidence); practical: sigma = the actual
    per-coordinate noise std 2 z B (R + 1) of a user's gradient and L = 1 (fewer, larger batches: each
    step's noise is averaged over more users).
    """
    t = max(int(n_users), 1)
    z = analytic_noise_multiplier(epsilon, delta)
    if constants == "theory":
        sig = 2.0 * z
        k = (t / (sig * sig * math.log(max(t, 2) / confidence))) ** (1.0 / 3.0)
    else:
        sig = 2.0 * z * bound * (clip + 1.0)
        k = (t / (sig * sig)) ** (1.0 / 3.0)
    return int(min(max(1, round(k)), t))


class LDPSGDFit(SummingLocalFit):
    """K epochs of batched, clipped, privatised gradient steps."""

    oracle: LDPClippedSGD

    def __init__(self, *args) -> None:
        super().__init__(*args)
        cfg = self.oracle
        k = cfg.epochs if cfg.epochs is not None else ldp_sgd_epochs(
            self.n_rounds, cfg.privacy.epsilon, cfg.privacy.delta, cfg.constants, cfg.confidence, self.bound,
            cfg.clip)
        k = min(k, self.n_rounds)
        self.stage_sizes = stage_sizes_split(self.n_rounds, [1.0 / k] * k)
        self.theta = np.zeros(self.dim)
        self._radius = padded(self.bound * (cfg.clip + 1.0))
        z = analytic_noise_multiplier(cfg.privacy.epsilon, cfg.privacy.delta)
        self._channel = GaussianMechanism(sensitivity=2.0 * self._radius, sigma=z * 2.0 * self._radius)
        self._sum = np.zeros(self.dim)
        self.steps = 0

    def _randomizer(self, stage: int) -> LocalRandomizer:
        stat = ClippedGradientStatistic(self.theta.copy(), self.oracle.clip)
        return LocalRandomizer(stat, self._radius, self._channel, self.bound)

    def _close_stage(self, stage: int) -> None:
        if self._count > 0:
            self.theta = self.theta - self.oracle.eta * self._sum / self._count
            self.steps += 1
        self._sum = np.zeros(self.dim)
        self._count = 0

    def _estimate(self) -> Estimate:
        return Estimate(self.theta, self.link, np.eye(self.dim), float(np.linalg.norm(self.theta)) + 1.0,
                        info=dict(epochs=len(self.stage_sizes), steps=self.steps, noise_std=self._channel.sigma))


@register_oracle
@dataclass(frozen=True)
class LDPClippedSGD(Oracle):
    """LDP clipped SGD (dimension-free): improper batched gradient descent on the square loss.

    Parameters
    ----------
    privacy : PrivacySpec
        Local DP; each user spends (epsilon, delta) once.
    constants : {"practical", "theory"}
        How the number of epochs K is chosen (see :func:`ldp_sgd_epochs`).
    epochs : int, optional
        K, overriding ``constants``.
    eta : float
        Step size (the source's 1).
    clip : float
        R, the clip on the predictions (the source's 2).
    confidence : float
        Statistical failure probability in the theory K.

    References
    ----------
    Source paper, `alg:LDP-improper-GD`, `thm:improper-LDP`.
    """

    constants: Constants = "practical"
    epochs: int | None = None
    eta: float = 1.0
    clip: float = 2.0
    confidence: float = 0.05

    name: ClassVar[str] = "ldp-sgd"
    privacy_models: ClassVar[tuple[str, ...]] = ("ldp",)
    fit_class: ClassVar[type] = LDPSGDFit
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **Oracle.parameter_constraints, "constants": [Options(CONSTANTS)], "epochs": [None, POSITIVE_INT],
        "eta": [POSITIVE], "clip": [POSITIVE], "confidence": [UNIT_OPEN]}
