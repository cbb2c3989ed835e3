"""Optimal locally private simple linear regression (d = 1).

Every user t sends (sign(x_t) y_t, |x_t|) through one Laplace mechanism; the learner averages them
into (psi_hat, Psi_hat), estimates of (theta* E|x|, E|x|), and returns clip_1(psi_hat / Psi_hat). The
error is O(1 / (E|x| epsilon sqrt(T))) (`lem:1d-LDP`): it depends on the L1 covariance E|x|, not on
E[x^2]. Perturbing the sufficient statistics (x^2, x y) instead is smooth in x and pays
1 / (E[x^2] epsilon sqrt(T)): `prop:OLS-fail-local-gen` proves this lower bound (for the worst theta*)
for every LDP mechanism whose channels are smooth in x, when x in [-1, 1] has E x = 0; see :mod:`.ssp_local`.

Features are clipped to [-B, B] and divided by B, so the pair lies in [-1, 1] x [0, 1]; the estimate
is clip_1(psi_hat / (B Psi_hat)).

Privacy. The pair has L1 sensitivity 3 on [-1, 1] x [0, 1], and one Laplace mechanism of scale
3/epsilon on it is epsilon-LDP (:class:`~privbandit.privacy.LaplacePair`; the paper's per-entry
"Laplace(., alpha/2)" read literally would spend 1.5 alpha). Users send the pair centred by the public
(0, 1/2), i.e. (sign(x) y, |x|/B - 1/2) in the L1 ball of radius 3/2, the ball the
:class:`~privbandit.privacy.LocalRandomizer` projects onto and whose L1 diameter 3 the Laplace
sensitivity covers; the learner adds the 1/2 back (post-processing).

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

from .._validation import POSITIVE, UNIT_OPEN, Options, ParameterConstraints, check_array
from ..privacy import LaplacePair, LocalRandomizer
from .base import CONSTANTS, Constants, Estimate, Oracle, SummingLocalFit, two_sided_quantile
from .registry import register_oracle

#: The public centre subtracted from |x| / B, so that the pair lies in the L1 ball of radius 3/2.
PSI_CENTRE = 0.5

#: L1 radius of the centred pair: |sign(x) y| + ||x|/B - 1/2| <= 1 + 1/2, exactly in floating point.
PAIR_L1_RADIUS = 1.5


@dataclass(frozen=True)
class SignPairStatistic:
    """x, y -> (sign(x) y, |x| / B - 1/2) for clipped x in [-B, B] and y in [-1, 1]: in [-1, 1] x [-1/2, 1/2]."""

    bound: float

    def __call__(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        col = x[:, 0]
        # min(., 1) removes rounding above 1 in |x| / B, so the L1 norm is <= 3/2 exactly
        return np.stack([np.sign(col) * y, np.minimum(np.abs(col) / self.bound, 1.0) - PSI_CENTRE], axis=1)


def _column(features: Any) -> np.ndarray:
    """Features (m,) or a scalar as the column (m, 1): with d = 1 each entry is one row's x."""
    x = check_array("features", features, ndim=(0, 1, 2))
    return x.reshape(-1, 1) if x.ndim <= 1 else x


class SimpleLDPFit(SummingLocalFit):
    """Running sums of the users' noisy pairs; ``add`` also takes 1-d features (one x per row)."""

    oracle: SimpleLDP

    def __init__(self, *args) -> None:
        super().__init__(*args)
        if self.dim != 1:
            raise ValueError(f"the one-dimensional LDP regression needs dim=1, got dim={self.dim}")
        pair = LaplacePair(self.oracle.privacy.epsilon)
        # The centred statistic lies in the L1 ball of radius 3/2, whose L1 diameter 3 is the Laplace
        # mechanism's declared sensitivity (LaplacePair.L1_SENSITIVITY).
        self._randomizer_ = LocalRandomizer(SignPairStatistic(self.bound), PAIR_L1_RADIUS, pair.mechanism, self.bound)
        self._sum = np.zeros(2)

    def add(self, features: Any, rewards: Any) -> None:
        """Add rows: features (m,) or (m, 1) and rewards (m,), or one x and its reward."""
        super().add(_column(features), rewards)

    def _estimate(self) -> Estimate:
        cfg = self.oracle
        n = max(self._count, 1)
        psi_hat, big_psi_hat = self._sum / n + np.array([0.0, PSI_CENTRE]) if self._count else (0.0, 0.0)
        s = math.sqrt((2.0 * (LaplacePair.L1_SENSITIVITY / cfg.privacy.epsilon) ** 2 + 1.0) / n)
        z = 1.0 / math.sqrt(cfg.confidence) if cfg.constants == "theory" else two_sided_quantile(cfg.confidence)
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
    parameter_constraints: ClassVar[ParameterConstraints] = {
        **Oracle.parameter_constraints, "constants": [Options(CONSTANTS)], "confidence": [UNIT_OPEN],
        "width_multiplier": [None, POSITIVE]}

    def fit(self, features: Any, rewards: Any, **kwargs: Any) -> Estimate:
        """:meth:`Oracle.fit` on x of shape (n,) or (n, 1) and y of shape (n,)."""
        return super().fit(_column(features), rewards, **kwargs)
