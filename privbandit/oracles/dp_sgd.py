"""DP-SGD, dimension-free: one pass of projected SGD on the squared loss, average iterate plus Gaussian noise.

In words: starting from theta_1 = 0, each user's row makes one step
theta_{t+1} = Proj_{unit ball}(theta_t - eta phi_t (<phi_t, theta_t> - y_t)); the estimate is the average
iterate theta_bar = (1/T) sum_t theta_t plus one Gaussian vector. Nothing depends on the dimension d: the
noise's Sigma-norm E||Z||_Sigma^2 = sigma^2 tr(Sigma) <= sigma^2 B^2, so the error bound
(log(1/delta)/T)^{1/2} + (sigma_alpha sqrt(log(1/delta))/T)^{2/3} holds in any dimension.

Privacy (`appdx:improper-JDP`): for eta B^2 <= 2 the step theta -> theta - eta phi (<phi, theta> - y) is
non-expansive (its linear part I - eta phi phi^T has eigenvalues in [-1, 1]) and so is the projection;
replacing one row changes that row's step by at most eta ||g(theta; z) - g(theta; z')|| <= 2 eta B (B + 1)
(|<phi, theta>| <= B on the unit ball, |y| <= 1), and the later steps never enlarge the gap. Every iterate,
hence the average, has L2 sensitivity 2 eta B (B + 1) (= 4 eta for B = 1: the paper's Delta = 2 eta).

Memory is O(d) and the pass is streamed row by row (the recursion is sequential; clipping and norms are
vectorised by the base class).

References
----------
Source paper, `alg:JDP-improper-GD`, `thm:improper-JDP`, `appdx:improper-JDP`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._validation import POSITIVE, UNIT_OPEN, Interval, Options, ParameterConstraints
from ..privacy import GaussianMechanism, PrivacySpec
from ..privacy.calibration import CALIBRATION_METHODS, release_multiplier
from .base import CONSTANTS, EpochFit, Estimate, Oracle
from .registry import register_oracle


class DPSGDFit(EpochFit):
    """theta_t and the running sum of iterates (O(d))."""

    oracle: DPSGD

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.eta = self.oracle.step_size(self.n_rounds, self.bound)
        self._theta = np.zeros(self.dim)
        self._sum = np.zeros(self.dim)
        self._noise_sd = 0.0
        self._count = 0
        self._theta_hat: np.ndarray | None = None

    def _add_rows(self, stage: int, start: int, x: np.ndarray, y: np.ndarray) -> None:
        theta, total, eta = self._theta, self._sum, self.eta
        for xi, yi in zip(x, y.tolist()):
            total += theta
            theta = theta - (eta * (float(xi @ theta) - yi)) * xi
            nrm = math.sqrt(float(theta @ theta))
            if nrm > 1.0:
                theta = theta / nrm
        self._theta = theta
        self._count += x.shape[0]

    def _close_stage(self, stage: int) -> None:
        start, stop = self.stage_range(stage)
        n = max(self._count, 1)
        sens = 2.0 * self.eta * self.bound * (self.bound + 1.0)
        mult = release_multiplier(self.oracle.privacy.epsilon, self.oracle.privacy.delta, self.oracle.calibration)
        mech = GaussianMechanism(sensitivity=sens, sigma=mult * sens)
        self._theta_hat = self._release(mech, self._sum / n, start, stop, "average iterate")
        self._noise_sd = mech.sigma

    def _estimate(self) -> Estimate:
        cfg = self.oracle
        conf = cfg.confidence
        radius = 1.0 + cfg.norm_bound + self._noise_sd * (math.sqrt(self.dim) + math.sqrt(2 * math.log(1 / conf)))
        return Estimate(self._theta_hat, self.link, np.eye(self.dim), radius / self.link.mu,
                        info=dict(eta=self.eta, noise_sd=self._noise_sd, n=self._count))


@register_oracle
@dataclass(frozen=True)
class DPSGD(Oracle):
    """DP-SGD (`alg:JDP-improper-GD`): projected one-pass SGD, average iterate, Gaussian output perturbation.

    Parameters
    ----------
    privacy : PrivacySpec
        Joint DP budget per user; one release at L2 sensitivity 2 eta B (B + 1).
    constants : {"practical", "theory"}
        Step size rule. ``"theory"``: eta = min(1/(2 sqrt(T)), (sigma_alpha^2 T log(1/conf))^{-1/3}) / B^2 with
        sigma_alpha = 2 z (z the noise multiplier), as in the proof of `thm:improper-JDP`; ``"practical"``:
        the same without the log(1/conf) factor.
    eta : float, optional
        A fixed step size (0 < eta B^2 <= 2 is required for the sensitivity above).
    confidence : float
        Failure probability used by the theory step size and the (trivial) radius.
    norm_bound : float
        S >= ||theta*|| (<= 1: the iterates live in the unit ball).
    calibration : {"analytic", "paper"}
        Gaussian calibration.

    Notes
    -----
    DP-SGD is an offline regression oracle (SquareCB); it has no pointwise confidence width. Its Estimate
    carries the trivial radius (1 + S + ||Z|| bound) ||phi||, valid but uninformative.

    References
    ----------
    Source paper, `alg:JDP-improper-GD`, `thm:improper-JDP`, `alg:square-cb`.
    """

    privacy: PrivacySpec = field(default_factory=PrivacySpec)
    constants: str = "practical"
    eta: float | None = None
    confidence: float = 0.05
    norm_bound: float = 1.0
    calibration: str = "analytic"

    name: ClassVar[str] = "dp-sgd"
    privacy_models: ClassVar[tuple[str, ...]] = ("jdp",)
    fit_class: ClassVar[type[EpochFit]] = DPSGDFit
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **Oracle.parameter_constraints, "constants": [Options(CONSTANTS)],
        "calibration": [Options(CALIBRATION_METHODS)], "eta": [None, POSITIVE], "confidence": [UNIT_OPEN],
        "norm_bound": [Interval(numbers.Real, 0.0, 1.0, closed="right")]}

    def step_size(self, n_rounds: int, bound: float) -> float:
        """eta for an epoch of ``n_rounds`` rows with feature bound B."""
        if self.eta is not None:
            if self.eta * bound ** 2 > 2.0:
                raise ValueError(f"eta must satisfy eta * B^2 <= 2 for the privacy analysis, got eta={self.eta:g}, "
                                 f"B={bound:g}")
            return float(self.eta)
        t = max(n_rounds, 1)
        z = release_multiplier(self.privacy.epsilon, self.privacy.delta, self.calibration)
        log_term = math.log(1.0 / self.confidence) if self.constants == "theory" else 1.0
        eta = min(1.0 / (2.0 * math.sqrt(t)), (1.0 / ((2.0 * z) ** 2 * t * log_term)) ** (1.0 / 3.0))
        return eta / bound ** 2
