"""Non-private ridge regression (OLS as lambda -> 0) with the self-normalized confidence ellipsoid.

theta_hat = (X^T X + lambda I)^{-1} X^T y, and with probability 1 - confidence, for every phi,
|<phi, theta_hat - theta*>| <= beta ||phi||_{V^{-1}}, V = X^T X + lambda I, where
beta = sigma_noise sqrt(2 log(1/confidence) + log det(V/lambda)) + sqrt(lambda) S
(Abbasi-Yadkori, Pal & Szepesvari 2011, Thm 2), with S >= ||theta*|| and sigma_noise the
sub-Gaussian scale of the reward noise (1 for rewards in [-1, 1]).

Streams in O(d^2) memory: only X^T X and X^T y are kept.

References
----------
Source paper, `ssec:OLS` and `tab:comp` (the non-private reference); Abbasi-Yadkori et al. (2011).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .._validation import check_positive, check_real
from ..infomatrix import psd_inv_sqrt
from .base import EpochFit, Estimate, Oracle, register_oracle


class RidgeFit(EpochFit):
    """Streaming sufficient statistics of ridge regression."""

    oracle: "Ridge"

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.gram = np.zeros((self.dim, self.dim))
        self.xty = np.zeros(self.dim)

    def _add_rows(self, stage: int, start: int, x: np.ndarray, y: np.ndarray) -> None:
        self.gram += x.T @ x
        self.xty += x.T @ y

    def _estimate(self) -> Estimate:
        cfg = self.oracle
        v = self.gram + cfg.lam * np.eye(self.dim)
        theta = np.linalg.solve(v, self.xty)
        _, logdet = np.linalg.slogdet(v / cfg.lam)
        beta = cfg.noise_scale * math.sqrt(2 * math.log(1 / cfg.confidence) + logdet) + math.sqrt(cfg.lam) * cfg.norm_bound
        return Estimate(theta, self.link, psd_inv_sqrt(v), beta * cfg.width_multiplier / self.link.mu,
                        info=dict(lam=cfg.lam, beta=beta, n=self.n_seen))


@register_oracle
@dataclass(frozen=True)
class Ridge(Oracle):
    """Non-private ridge regression / OLS with the Abbasi-Yadkori confidence ellipsoid.

    Parameters
    ----------
    privacy : PrivacySpec
        Must be non-private.
    lam : float
        Ridge regularizer lambda > 0.
    confidence : float
        Failure probability of the confidence ellipsoid, in (0, 1) (not a privacy parameter).
    noise_scale : float
        Sub-Gaussian scale of the reward noise (1 for rewards in [-1, 1]).
    norm_bound : float
        S >= ||theta*||.
    width_multiplier : float
        Multiplies the theoretical radius (1 = the theorem's; smaller is a practical choice).

    Notes
    -----
    For a GLM link the radius is divided by mu_nu (a standard GLM-UCB correction).

    References
    ----------
    Source paper, `ssec:OLS`, `tab:comp`.
    """

    lam: float = 1.0
    confidence: float = 0.05
    noise_scale: float = 1.0
    norm_bound: float = 1.0
    width_multiplier: float = 1.0

    name: ClassVar[str] = "ridge"
    privacy_models: ClassVar[tuple[str, ...]] = ("none",)
    fit_class: ClassVar[type[EpochFit]] = RidgeFit

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive("lam", self.lam)
        check_real("confidence", self.confidence, low=0.0, high=1.0, low_open=True, high_open=True)
        check_positive("noise_scale", self.noise_scale)
        check_positive("norm_bound", self.norm_bound)
        check_positive("width_multiplier", self.width_multiplier)
