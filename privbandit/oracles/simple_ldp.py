"""Optimal locally private simple linear regression (d = 1).

Every user t sends (sign(x_t) y_t, |x_t|) through one Laplace mechanism; the learner averages them
into (psi_hat, Psi_hat), estimates of (theta* E|x|, E|x|), and returns clip_1(psi_hat / Psi_hat). The
error is O(1 / (E|x| epsilon sqrt(T))) (`lem:1d-LDP`): it depends on the L1 covariance E|x|, not on
E[x^2]. Perturbing the sufficient statistics (x^2, x y) instead is smooth in x and pays
1 / (E[x^2] epsilon sqrt(T)) (`prop:OLS-fail-local-gen`); see :mod:`.ssp_local`.

Features are clipped to [-B, B] and divided by B, so the pair lies in [-1, 1] x [0, 1]; the estimate
is clip_1(psi_hat / (B Psi_hat)).

Privacy. The pair has L1 sensitivity 3 on [-1, 1] x [0, 1], and one Laplace mechanism of scale
3/epsilon on it is epsilon-LDP (:class:`~privbandit.privacy.LaplacePair`; the paper's per-entry
"Laplace(., alpha/2)" read literally would spend 1.5 alpha).

Width. The proof of `lem:1d-LDP` gives E|x| |theta_hat - theta*| <= 3 |Psi_hat - E Psi| + |psi_hat - E psi|,
with per-user variances at most 2 (3/epsilon)^2 + 1. With s = sqrt((2 (3/epsilon)^2 + 1)/T) the
width is min(2, 4 z s / (B max(Psi_hat - z s, s))) |x|, where z = 1/sqrt(confidence)
(Chebyshev, ``constants="theory"``) or the normal quantile at ``confidence`` (``"practical"``).

References
----------
Source paper, `alg:LDP-simple-linear-regression`, `lem:1d-LDP`, `appdx:proof-1d-LDP`,
`prop:OLS-fail-local-gen`; Duchi & Ruan (2024).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._validation import check_array, check_real
from ..privacy import LaplacePair, LocalRandomizer
from .base import Estimate, Oracle, SummingLocalFit, register_oracle, two_sided_quantile
from .iw_ldp import Constants, check_constants


@dataclass(frozen=True)
class SignPairStatistic:
    """x, y -> (sign(x) y, |x| / B) for clipped x in [-B, B] and y in [-1, 1]; lies in [-1, 1] x [0, 1]."""

    bound: float

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        col = x[:, 0]
        return np.stack([np.sign(col) * y, np.abs(col) / self.bound], axis=1)


def _column(features: Any) -> np.ndarray:
    """Features (m,) or a scalar as the column (m, 1): with d = 1 each entry is one row's x."""
    x = check_array("features", features, ndim=(0, 1, 2))
    return x.reshape(-1, 1) if x.ndim <= 1 else x


class SimpleLDPFit(SummingLocalFit):
    """Running sums of the users' noisy pairs; ``add`` also takes 1-d features (one x per row)."""

    oracle: "SimpleLDP"

    def __init__(self, *args) -> None:
        super().__init__(*args)
        if self.dim != 1:
            raise ValueError(f"the one-dimensional LDP regression needs dim=1, got dim={self.dim}")
        pair = LaplacePair(self.oracle.privacy.epsilon)
        # The statistic lies in [-1, 1] x [0, 1] (L2 radius sqrt 2); its L1 diameter is 3, the Laplace
        # mechanism's declared sensitivity (LaplacePair.L1_SENSITIVITY).
        self._randomizer_ = LocalRandomizer(SignPairStatistic(self.bound), math.sqrt(2.0) * (1.0 + 1e-9), pair.mechanism,
                                            self.bound)
        self._sum = np.zeros(2)
        self._count = 0

    def add(self, features: Any, rewards: Any) -> None:
        """Add rows: features (m,) or (m, 1) and rewards (m,), or one x and its reward."""
        super().add(_column(features), rewards)

    def _estimate(self) -> Estimate:
        cfg = self.oracle
        n = max(self._count, 1)
        psi_hat, big_psi_hat = self._sum / n
        s = math.sqrt((2.0 * (LaplacePair.L1_SENSITIVITY / cfg.privacy.epsilon) ** 2 + 1.0) / n)
        if cfg.constants == "theory":
            z = 1.0 / math.sqrt(cfg.confidence)
        else:
            z = two_sided_quantile(cfg.confidence)
        denom = max(big_psi_hat, s * 1e-6)
        theta = float(np.clip(psi_hat / (self.bound * denom), -1.0, 1.0)) if self._count else 0.0
        c = 4.0 * z * s / (self.bound * max(big_psi_hat - z * s, s))
        if cfg.width_multiplier is not None:
            c *= cfg.width_multiplier
        return Estimate(np.array([theta]), self.link, np.eye(1), min(2.0, c),
                        info=dict(psi_hat=float(psi_hat), Psi_hat=float(big_psi_hat), users=self._count,
                                  noise_std=s))


@register_oracle
@dataclass(frozen=True)
class SimpleLDP(Oracle):
    """The optimal one-dimensional LDP regression: Laplace on (sign(x) y, |x|), theta = clip_1(psi/Psi).

    Parameters
    ----------
    privacy : PrivacySpec
        Local DP; the mechanism is pure epsilon-LDP (delta is not spent).
    constants : {"practical", "theory"}
        Chebyshev (theory) or normal (practical) quantile in the width.
    width_multiplier : float, optional
        Multiplies the width constant (capped at the trivial 2).
    confidence : float
        Statistical failure probability of the width.

    References
    ----------
    Source paper, `alg:LDP-simple-linear-regression`, `lem:1d-LDP`.
    """

    constants: Constants = "practical"
    width_multiplier: float | None = None
    confidence: float = 0.05

    name: ClassVar[str] = "ldp-1d"
    privacy_models: ClassVar[tuple[str, ...]] = ("ldp",)
    fit_class: ClassVar[type] = SimpleLDPFit

    def fit(self, features: Any, rewards: Any, **kwargs: Any) -> Estimate:
        """:meth:`Oracle.fit` on x of shape (n,) or (n, 1) and y of shape (n,)."""
        return super().fit(_column(features), rewards, **kwargs)

    def __post_init__(self) -> None:
        super().__post_init__()
        check_constants(self.constants)
        check_real("confidence", self.confidence, low=0.0, high=1.0, low_open=True, high_open=True)
        if self.width_multiplier is not None:
            check_real("width_multiplier", self.width_multiplier, low=0.0, low_open=True)
